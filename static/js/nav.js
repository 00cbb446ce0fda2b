// The header's groups of links close as a menu does: on a click elsewhere, on Escape, and when another opens.
document.addEventListener("click", (event) => {
  for (const group of document.querySelectorAll("details.nav-group[open]")) {
    if (!group.contains(event.target)) group.open = false;
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  for (const group of document.querySelectorAll("details.nav-group[open]")) {
    group.open = false;
    group.querySelector("summary").focus();
  }
});
