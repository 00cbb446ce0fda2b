// The report request above a judging page (templates/work/request_text.html) stays as the assessor last left it,
// open or folded, on every page of this browser: folding it once keeps it folded on the next pair, so the
// reports start on the first screen. Loaded right after the request (not deferred), so that the page is laid
// out once, folded, and does not jump.
(function () {
  "use strict";
  const request = document.getElementById("request-text");
  if (!request) return;
  const key = "judge.request-open." + (request.dataset.foldKey || "report");
  let stored = null;
  try {
    stored = window.localStorage.getItem(key);
  } catch (error) {
    return; // storage refused (a private window's policy): the request opens as the page says
  }
  if (stored !== null) request.open = stored === "1";
  request.addEventListener("toggle", function () {
    try {
      window.localStorage.setItem(key, request.open ? "1" : "0");
    } catch (error) {
      // nothing kept: the next page opens the request as its template says
    }
  });
})();
