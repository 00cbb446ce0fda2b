// The topic picker's filter box: shows the topics whose id, query or assessors contain every
// word typed, and counts the topics ticked. Without JavaScript the full list shows instead.
(function () {
  function setUp(picker) {
    if (picker.dataset.ready) return;
    picker.dataset.ready = "1";
    const filter = picker.querySelector(".topic-filter");
    const rows = Array.from(picker.querySelectorAll("li[data-search]"));
    const chosenCount = picker.querySelector("[data-chosen-count]");
    filter.hidden = false;
    function count() {
      const ticked = picker.querySelectorAll("input[type=checkbox]:checked").length;
      chosenCount.textContent = ticked ? ` · ${ticked} chosen` : "";
    }
    filter.addEventListener("input", function () {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      for (const row of rows) {
        const text = row.dataset.search;
        row.hidden = !words.every((word) => text.includes(word));
      }
    });
    // Enter in the filter box must not send the form.
    filter.addEventListener("keydown", function (event) {
      if (event.key === "Enter") event.preventDefault();
    });
    picker.addEventListener("change", count);
    count();
  }
  function setUpAll() {
    document.querySelectorAll("[data-topic-picker]").forEach(setUp);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUpAll);
  else setUpAll();
})();
