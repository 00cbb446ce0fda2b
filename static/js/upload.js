// Show only the options of the chosen kind of file; without JavaScript all of them show.
(function () {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const kind = form.querySelector("select[name=kind]");
  function update() {
    for (const fieldset of form.querySelectorAll("fieldset[data-kinds]")) {
      const kinds = fieldset.dataset.kinds.split(" ");
      fieldset.hidden = !kinds.includes(kind.value);
    }
  }
  kind.addEventListener("change", update);
  update();
})();
