// The nugget workspace: keyboard shortcuts, a queue of operations that survives a lost
// connection (and a reload), the version check's conflict message, and the heartbeat.
//
// Every change is a form POST to the server (the same forms work without this
// script). Here they go through the assessors' save queue (offline-queue.js),
// one at a time, each with an id of its own so that a retry of a request whose
// answer was lost is not applied twice; each also carries the list version it
// was made on, and the server answers with the new panel to swap in.
(function () {
  "use strict";

  const root = document.getElementById("workspace");
  if (!root) return;

  const HEARTBEAT_MS = 30000;
  const csrf = OfflineQueue.csrfToken();

  const state = {
    version: null,
    selectedId: null,
    marked: new Set(),
    submitConfirmed: false,
    lastInput: Date.now(),
    lastBeat: 0,
  };

  // --- helpers -------------------------------------------------------------

  function panel() {
    return document.getElementById("nugget-panel");
  }
  function items() {
    return Array.from(document.querySelectorAll("#nugget-list li.nugget"));
  }
  function frozen() {
    return panel().dataset.frozen === "1";
  }
  function setConnection(text, kind) {
    OfflineQueue.connectionShow(text, kind);
  }
  function alertShow(text, withReload) {
    OfflineQueue.alertShow(text, withReload);
  }
  function alertHide() {
    OfflineQueue.alertHide();
  }

  // --- selection -------------------------------------------------------------

  function select(id, scroll, takeFocus) {
    const list = items();
    if (!list.length) {
      state.selectedId = null;
      return;
    }
    let el = list.find((li) => li.dataset.id === String(id)) || list[0];
    list.forEach((li) => li.classList.toggle("selected", li === el));
    state.selectedId = el.dataset.id;
    // A bank's answer form names the selected question.
    const question = document.getElementById("answer-question");
    if (question) question.value = state.selectedId;
    if (scroll !== false) el.scrollIntoView({ block: "nearest" });
    if (takeFocus !== false && !el.contains(document.activeElement)) el.focus({ preventScroll: true });
  }
  function selected() {
    return items().find((li) => li.dataset.id === String(state.selectedId)) || null;
  }
  function step(delta) {
    const list = items();
    if (!list.length) return;
    const index = list.findIndex((li) => li.dataset.id === String(state.selectedId));
    const next = Math.max(0, Math.min(list.length - 1, (index < 0 ? 0 : index + delta)));
    select(list[next].dataset.id);
  }
  function showMarks() {
    items().forEach((li) => {
      const on = state.marked.has(li.dataset.id);
      li.classList.toggle("marked", on);
      const box = li.querySelector(".merge-mark");
      if (box) box.checked = on;
    });
  }

  // --- saving (the queue itself is OfflineQueue's) --------------------------------

  function applied(op, data) {
    swapPanel(data.panel || "", data.bar);
    if (root.dataset.conflict !== "1") alertHide();
  }

  function refused(op, data) {
    const message = data.error || "The change was refused.";
    if (data.kind === "conflict") {
      // Everything queued was made on a list that no longer exists: show it, do not apply it.
      const lost = [op].concat(saves.queue).map((o) => o.label);
      saves.drop(() => true);
      alertShow(message + " Not saved: " + lost.join("; ") + ".", true);
      root.dataset.conflict = "1";
    } else {
      alertShow(message, false);
      // A refused submit leaves the list as it was: every edit before it is saved.
      return op.url.endsWith("/submit/");
    }
    return false;
  }

  const saves = OfflineQueue.create({
    storeKey: "nugget-ops:" + root.dataset.work,
    noun: "change",
    applied: applied,
    refused: refused,
    // The version is fixed at the first attempt: a retry must be the same request.
    beforeSend: (op) => {
      if (op.fields.version === undefined) op.fields.version = state.version;
    },
    // Text typed and not yet sent is unsaved too.
    unsaved: () => {
      const unsent = document.getElementById("new-nugget");
      const editing = Array.from(document.querySelectorAll("li.nugget.editing input.nugget-edit")).some(
        (input) => input.value.trim() !== (input.dataset.original || "").trim()
      );
      return editing || Boolean(unsent && unsent.value.trim());
    },
  });

  function enqueue(url, fields, label) {
    if (frozen() && !url.endsWith("/submit/")) return;
    saves.push(url, fields, { label: label });
  }

  function enqueueForm(form, submitter) {
    const data = new FormData(form, submitter || undefined);
    const url = (submitter && submitter.getAttribute("formaction")) || form.getAttribute("action");
    const fields = {};
    for (const [name, value] of data.entries()) {
      if (name === "csrfmiddlewaretoken" || name === "version") continue;
      if (name in fields) fields[name] = [].concat(fields[name], value);
      else fields[name] = value;
    }
    const op = url.replace(/\/$/, "").split("/").pop();
    enqueue(url, fields, describe(op, fields));
  }

  function describe(op, fields) {
    if (fields.text && typeof fields.text === "string") return op + " “" + fields.text.slice(0, 60) + "”";
    if (fields.importance) return "mark " + fields.importance;
    return op;
  }

  function swapPanel(html, barHtml) {
    const holder = document.createElement("div");
    holder.innerHTML = html.trim();
    const fresh = holder.querySelector("#nugget-panel");
    if (!fresh) return;
    // Whatever the assessor is typing while a change is saved stays where it is.
    const kept = typingState();
    panel().replaceWith(fresh);
    if (barHtml) barSwap(barHtml);
    afterSwap(kept);
  }

  // A bank's toolbar (size, status, undo, submit) is in the sticky bar above the columns, not in the panel.
  function barSwap(html) {
    const holder = document.createElement("div");
    holder.innerHTML = html.trim();
    const fresh = holder.querySelector("#ws-toolbar");
    const old = document.getElementById("ws-toolbar");
    if (fresh && old) old.replaceWith(fresh);
  }

  function typingState() {
    const active = document.activeElement;
    if (!active || !panel().contains(active) || !active.matches("input[type=text], textarea")) return null;
    const li = active.closest("li.nugget");
    return {
      id: active.id,
      nugget: li && active.classList.contains("nugget-edit") ? li.dataset.id : null,
      value: active.value,
      original: active.dataset.original,
      start: active.selectionStart,
      end: active.selectionEnd,
    };
  }

  function typingRestore(kept) {
    let input = null;
    if (kept.nugget) {
      const li = items().find((el) => el.dataset.id === kept.nugget);
      if (!li) return false;
      editOpen(li);
      input = li.querySelector("input.nugget-edit");
      if (input) input.dataset.original = kept.original || input.dataset.original;
    } else if (kept.id === "new-nugget" || kept.id === "new-answer") {
      input = document.getElementById(kept.id);
    }
    if (!input || input.disabled) return false;
    input.value = kept.value;
    input.focus({ preventScroll: true });
    try {
      input.setSelectionRange(kept.start, kept.end);
    } catch (e) {
      /* not a text input */
    }
    return true;
  }

  function afterSwap(kept) {
    const p = panel();
    state.version = parseInt(p.dataset.version, 10);
    const ids = new Set(items().map((li) => li.dataset.id));
    state.marked = new Set(Array.from(state.marked).filter((id) => ids.has(id)));
    showMarks();
    const restored = kept ? typingRestore(kept) : false;
    select(p.dataset.focus || state.selectedId, true, !restored);
    document.querySelectorAll(".source-form input[name=nugget]").forEach((input) => (input.value = state.selectedId || ""));
    segmentsLabel();
  }

  // Which nuggets come from which segment: the segment column lives outside the panel.
  function segmentsLabel() {
    const numbers = {};
    items().forEach((li, index) => {
      const ref = li.querySelector(".source-ref");
      if (ref) (numbers[ref.textContent.trim()] = numbers[ref.textContent.trim()] || []).push(index + 1);
    });
    document.querySelectorAll("#segments li.segment").forEach((segment) => {
      const label = segment.querySelector(".seg-nuggets");
      const list = numbers[segment.dataset.docid];
      if (label) label.textContent = list ? "· nuggets " + list.join(", ") : "";
    });
  }

  async function reloadPanel() {
    const response = await fetch(root.dataset.panelUrl, {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    if (response.ok) {
      const data = await response.json();
      swapPanel(data.panel, data.bar);
      delete root.dataset.conflict;
      alertHide();
    }
  }
  document.getElementById("ws-reload").addEventListener("click", reloadPanel);
  document.getElementById("ws-alert-close").addEventListener("click", () => {
    delete root.dataset.conflict;
    alertHide();
  });

  // --- forms -------------------------------------------------------------------

  root.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches("form[data-op], form.nugget-form")) return;
    event.preventDefault();
    const submitter = event.submitter;
    if (form.id === "submit-form" && !state.submitConfirmed) {
      // Submitting freezes the list: ask first.
      confirmOpen();
      return;
    }
    if (form.id === "add-form") {
      const text = form.querySelector("input[name=text]");
      if (!text.value.trim()) return;
      form.querySelector("input[name=after]").value = state.selectedId || "";
      enqueueForm(form, submitter);
      text.value = "";
      text.focus();
      return;
    }
    if (form.id === "answer-form") {
      // The answer goes to the selected question (or changes the answer being changed); the form is cleared
      // once it is queued.
      const text = form.querySelector("input[name=answer_text]");
      if (!text.value.trim()) return;
      const changing = form.querySelector("input[name=answer]").value !== "";
      if (state.selectedId && !changing) form.querySelector("select[name=nugget]").value = state.selectedId;
      enqueueForm(form, submitter);
      answerFormReset(form);
      text.focus();
      return;
    }
    if (form.classList.contains("source-form")) {
      if (!state.selectedId) {
        alertShow("Select a nugget first (j/k), then choose its source segment.", false);
        return;
      }
      form.querySelector("input[name=nugget]").value = state.selectedId;
    }
    if (form.classList.contains("nugget-form")) {
      select(form.querySelector("input[name=nugget]").value, false);
      // The edit input only belongs to an edit; other buttons send the nugget id and their own value.
      if (!submitter || !submitter.getAttribute("formaction")) {
        editSave(form.closest("li"));
        return;
      }
    }
    enqueueForm(form, submitter);
  });

  // A bank's answer is changed in the answer form: its text and documents are loaded there, and the form
  // sends answer_edit instead of answer_add until it is sent or Esc clears it.
  function answerFormReset(form) {
    form.setAttribute("action", form.getAttribute("action").replace(/answer_edit\/$/, "answer_add/"));
    form.querySelector("input[name=answer]").value = "";
    form.querySelector("input[name=answer_text]").value = "";
    form.querySelectorAll("input[name=documents]").forEach((box) => (box.checked = false));
    const button = document.getElementById("answer-submit");
    button.textContent = button.dataset.add;
  }
  function answerEditOpen(opener) {
    const form = document.getElementById("answer-form");
    if (!form) return;
    form.setAttribute("action", form.getAttribute("action").replace(/answer_add\/$/, "answer_edit/"));
    form.querySelector("select[name=nugget]").value = opener.dataset.nugget;
    form.querySelector("input[name=answer]").value = opener.dataset.answer;
    const documents = new Set(opener.dataset.documents.split(" ").filter(Boolean));
    form.querySelectorAll("input[name=documents]").forEach((box) => (box.checked = documents.has(box.value)));
    const text = form.querySelector("input[name=answer_text]");
    text.value = opener.dataset.text;
    const button = document.getElementById("answer-submit");
    button.textContent = button.dataset.change;
    text.focus();
  }

  root.addEventListener("click", (event) => {
    const opener = event.target.closest(".answer-edit-open");
    if (opener) return answerEditOpen(opener);
    const li = event.target.closest("li.nugget");
    if (li && !event.target.closest("button, input, label")) select(li.dataset.id, false);
    if (event.target.closest(".split-open")) splitOpen(li);
    if (li && event.target.closest(".nugget-text")) editOpen(li);
  });
  // Leaving the field saves the edit, as Enter does (Esc restores the text first).
  root.addEventListener("focusout", (event) => {
    if (event.target.matches("input.nugget-edit")) editSave(event.target.closest("li"));
  });
  root.addEventListener("change", (event) => {
    if (event.target.matches(".merge-mark")) {
      const id = event.target.value;
      if (event.target.checked) state.marked.add(id);
      else state.marked.delete(id);
      showMarks();
    }
  });

  // --- edit, split, merge ------------------------------------------------------------

  function editOpen(li) {
    if (!li || frozen()) return;
    const input = li.querySelector("input.nugget-edit");
    if (!input) return;
    li.classList.add("editing");
    input.hidden = false;
    input.dataset.original = li.querySelector(".nugget-text").textContent;
    input.focus();
    input.select();
  }
  function editClose(li) {
    const input = li && li.querySelector("input.nugget-edit");
    if (!input) return;
    // Not editing any more before the field is hidden: hiding it blurs it at once, and a blur saves.
    li.classList.remove("editing");
    input.hidden = true;
    li.focus({ preventScroll: true });
  }
  function editSave(li) {
    // Closing the field blurs it, and a blur saves: only the first of the two counts (see editClose).
    if (!li || !li.classList.contains("editing")) return;
    const input = li.querySelector("input.nugget-edit");
    const text = input.value.trim();
    const original = input.dataset.original || li.querySelector(".nugget-text").textContent;
    editClose(li);
    if (!text || text === original.trim()) return;
    li.querySelector(".nugget-text").textContent = text; // shown at once; the swap confirms it
    const url = li.querySelector("form").getAttribute("action");
    enqueue(url, { nugget: li.dataset.id, text: text }, "edit “" + text.slice(0, 60) + "”");
  }

  function splitOpen(li) {
    li = li || selected();
    if (!li || frozen()) return;
    const form = document.getElementById("split-form");
    form.querySelector("input[name=nugget]").value = li.dataset.id;
    const area = form.querySelector("textarea");
    area.value = li.querySelector(".nugget-text").textContent.trim();
    li.after(form);
    form.hidden = false;
    area.focus();
  }
  function mergeOpen() {
    if (frozen()) return;
    const ids = new Set(state.marked);
    if (state.selectedId) ids.add(state.selectedId);
    const chosen = items().filter((li) => ids.has(li.dataset.id));
    if (chosen.length < 2) {
      alertShow("Mark the nuggets to merge with x (at least two, the selected one counts), then press m.", false);
      return;
    }
    const form = document.getElementById("merge-form");
    form.querySelector("input[name=nuggets]").value = chosen.map((li) => li.dataset.id).join(",");
    const input = form.querySelector("input[name=text]");
    input.value = chosen.map((li) => li.querySelector(".nugget-text").textContent.trim()).join("; ");
    chosen[0].before(form);
    form.hidden = false;
    input.focus();
    input.select();
  }
  function formClose(form) {
    form.hidden = true;
    const li = selected();
    if (li) li.focus({ preventScroll: true });
  }

  function clickIn(li, selector) {
    const button = li && li.querySelector(selector);
    if (button && !button.disabled) button.click();
  }

  // --- keyboard ------------------------------------------------------------------

  function typing(target) {
    return target.matches("input, textarea, select, [contenteditable]");
  }

  document.addEventListener("keydown", (event) => {
    state.lastInput = Date.now();
    const target = event.target;
    const help = document.getElementById("help");
    if (help.open) {
      // The dialog handles Esc itself; h and ? close it as they open it.
      if (event.key === "h" || event.key === "?") {
        event.preventDefault();
        help.close();
      }
      return;
    }
    if (document.getElementById("submit-confirm").open) return;

    if (typing(target)) {
      if (target.matches("input.nugget-edit")) {
        const li = target.closest("li");
        if (event.key === "Enter") {
          event.preventDefault();
          editSave(li);
        } else if (event.key === "Escape") {
          event.preventDefault();
          target.value = target.dataset.original || target.value;
          editClose(li);
        }
      } else if (target.id === "merge-text" || target.id === "split-text") {
        const form = target.form;
        const submit = target.id === "merge-text" ? event.key === "Enter" : event.key === "Enter" && (event.ctrlKey || event.metaKey);
        if (event.key === "Escape") {
          event.preventDefault();
          formClose(form);
        } else if (submit) {
          event.preventDefault();
          form.hidden = true;
          if (form.id === "merge-form") state.marked.clear();
          enqueueForm(form);
        }
      } else if (event.key === "Escape") {
        if (target.id === "new-answer") answerFormReset(target.form);
        target.blur();
        const li = selected();
        if (li) li.focus({ preventScroll: true });
      }
      return;
    }
    if (event.altKey) return;
    if ((event.key === "Enter" || event.key === " ") && target.matches("button, a, summary")) return;
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
      event.preventDefault();
      return undo();
    }
    if (event.ctrlKey || event.metaKey) return;

    const li = selected();
    const handled = {
      j: () => step(1),
      ArrowDown: () => step(1),
      k: () => step(-1),
      ArrowUp: () => step(-1),
      J: () => clickIn(li, "button[formaction$='move/'][title^='move down']"),
      K: () => clickIn(li, "button[formaction$='move/'][title^='move up']"),
      v: () => clickIn(li, "button.imp.vital"),
      o: () => clickIn(li, "button.imp.okay"),
      n: () => {
        const input = document.getElementById("new-nugget");
        if (input && !input.disabled) input.focus();
        else if (frozen()) alertShow("The list is submitted and frozen; an organizer can reopen it.", false);
        else alertShow("The list is full: delete or merge a nugget before adding one.", false);
      },
      e: () => editOpen(li),
      Enter: () => editOpen(li),
      // A bank's question: write a gold answer to the selected one.
      a: () => {
        const input = document.getElementById("new-answer");
        if (!input) return;
        const question = document.getElementById("answer-question");
        if (li && question) question.value = li.dataset.id;
        input.focus();
      },
      d: () => clickIn(li, "button[formaction$='delete/']"),
      Delete: () => clickIn(li, "button[formaction$='delete/']"),
      x: () => {
        if (!li) return;
        if (state.marked.has(li.dataset.id)) state.marked.delete(li.dataset.id);
        else state.marked.add(li.dataset.id);
        showMarks();
      },
      m: mergeOpen,
      s: () => splitOpen(li),
      u: undo,
      "/": () => document.getElementById("segment-filter").focus(),
      "?": () => helpOpen("keys"),
      h: () => helpOpen("guide"),
      Escape: () => {
        state.marked.clear();
        showMarks();
        alertHide();
      },
    }[event.key];
    if (handled) {
      event.preventDefault();
      handled();
    }
  });

  // --- submit: confirmed in a dialog -----------------------------------------------------------

  const confirmDialog = document.getElementById("submit-confirm");
  function confirmOpen() {
    const list = items();
    confirmDialog.querySelector(".confirm-count").textContent = String(list.length);
    // Nuggets still without importance keep the list from being submitted: say so before, not after.
    // A bank's questions may go without importance.
    const bank = panel().dataset.bank === "1";
    const missing = bank ? 0 : list.filter((li) => !li.classList.contains("vital") && !li.classList.contains("okay")).length;
    const warning = document.getElementById("confirm-missing");
    warning.hidden = missing === 0;
    warning.querySelector(".confirm-missing-count").textContent = String(missing);
    document.getElementById("submit-confirm-yes").disabled = missing > 0;
    confirmDialog.showModal();
  }
  document.getElementById("submit-confirm-no").addEventListener("click", () => confirmDialog.close());
  document.getElementById("submit-confirm-yes").addEventListener("click", () => {
    confirmDialog.close();
    const form = document.getElementById("submit-form");
    if (form) enqueueForm(form);
  });

  function helpOpen(part) {
    const help = document.getElementById("help");
    if (!help.open) help.showModal();
    const target = document.getElementById(part === "guide" ? "guidelines" : "help-keys");
    if (target) target.scrollIntoView({ block: "start" });
  }

  function undo() {
    const form = document.querySelector("form[data-op=undo]");
    if (form) enqueueForm(form);
  }

  document.getElementById("help-open").addEventListener("click", () => helpOpen("keys"));
  document.getElementById("guide-open").addEventListener("click", () => helpOpen("guide"));
  const notesOpen = document.getElementById("notes-open");
  if (notesOpen) notesOpen.addEventListener("click", () => helpOpen("guide"));

  // --- segments filter -------------------------------------------------------------

  // A segment is shown when it holds every word typed; the words are marked in its text and counted.
  function filterSegments() {
    const words = document.getElementById("segment-filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    // A bank's documents have no grade to filter by.
    const grade = document.getElementById("segment-grade");
    const minimum = grade ? parseInt(grade.value, 10) : 0;
    let shown = 0;
    let matches = 0;
    document.querySelectorAll("#segments li.segment").forEach((li) => {
      const text = li.textContent.toLowerCase();
      li.hidden = parseInt(li.dataset.grade || "0", 10) < minimum || !words.every((w) => text.includes(w));
      li.querySelectorAll(".seg-title, .seg-text").forEach((part) => {
        Highlight.clear(part);
        if (!li.hidden && words.length) matches += Highlight.markText(part, words);
      });
      if (!li.hidden) shown += 1;
    });
    document.getElementById("segment-count").textContent = words.length
      ? shown + " " + (grade ? "segment" : "document") + (shown === 1 ? ", " : "s, ") + matches + (matches === 1 ? " match" : " matches")
      : "";
  }
  document.getElementById("segment-filter").addEventListener("input", filterSegments);
  document.getElementById("segment-grade")?.addEventListener("change", filterSegments);

  // --- heartbeat: active time is measured on the server ------------------------------------

  ["mousemove", "mousedown", "scroll", "input", "touchstart"].forEach((name) =>
    document.addEventListener(name, () => (state.lastInput = Date.now()), { passive: true, capture: true })
  );

  async function heartbeat() {
    // Only a person at work earns time: no input since the last beat, no beat.
    if (document.visibilityState !== "visible" || state.lastInput <= state.lastBeat) return;
    state.lastBeat = Date.now();
    try {
      const response = await fetch(root.dataset.heartbeatUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRFToken": csrf },
      });
      if (!response.ok || response.redirected) return;
      const data = await response.json();
      const time = document.getElementById("active-time");
      if (time) time.textContent = data.time;
      if (!saves.busy() && data.version > state.version) {
        alertShow("This list was changed in another tab or window.", true);
        root.dataset.conflict = "1";
      }
    } catch (e) {
      setConnection("Connection lost: retrying…", "lost");
      return;
    }
    if (!saves.queue.length) setConnection("Saved", "ok");
  }
  setInterval(heartbeat, HEARTBEAT_MS);

  // --- a bank's request and its bar ----------------------------------------------------

  // The request stays folded once the assessor folds it, on every bank in this browser, until unfolded.
  const request = document.getElementById("request-text");
  const REQUEST_FOLDED_KEY = "nuggets:bank-request-folded";
  if (request) {
    try {
      if (localStorage.getItem(REQUEST_FOLDED_KEY) === "1") request.open = false;
    } catch (e) {
      /* no storage: the request is shown */
    }
    request.addEventListener("toggle", () => {
      try {
        localStorage.setItem(REQUEST_FOLDED_KEY, request.open ? "0" : "1");
      } catch (e) {
        /* no storage: the fold lasts this page */
      }
    });
  }
  // The bar's height, as on the judging pages (--judge-bar-height): a question scrolled to and the documents'
  // column stop below it.
  const sticky = document.getElementById("judge-sticky");
  function barMeasure() {
    document.documentElement.style.setProperty("--judge-bar-height", sticky.getBoundingClientRect().height + "px");
  }
  if (sticky) {
    barMeasure();
    if (window.ResizeObserver) new ResizeObserver(barMeasure).observe(sticky);
  }

  // --- start ---------------------------------------------------------------------------

  state.version = parseInt(panel().dataset.version, 10);
  select(panel().dataset.focus || (location.hash.startsWith("#nugget-") ? location.hash.slice(8) : null), false);
  document.querySelectorAll(".source-form input[name=nugget]").forEach((input) => (input.value = state.selectedId || ""));
  if (saves.queue.length) {
    // Changes from before a reload or a crash: send them (the server skips any it already has).
    setConnection("Sending " + saves.queue.length + " kept change(s)…", "busy");
    saves.pump();
  }
  window.nuggetWorkspace = { state: state, saves: saves, heartbeat: heartbeat };
})();
