// Judging pages (ManualAssign and support): one key per label, autosave, progress.
//
// Every row is a form whose buttons POST one label (the page works without this
// script). Here the saves go through the assessors' save queue (offline-queue.js),
// which keeps them across a lost connection or a reload and sends each with an
// operation id, so that a retry is applied once. Each save carries the label
// the page showed ("previous"): if another tab changed it, the server refuses
// with the current label and the row shows it.
(function () {
  "use strict";

  const root = document.getElementById("judge");
  if (!root) return;

  const state = { selected: null };

  function rows() {
    return Array.from(document.querySelectorAll("#rows li.jrow"));
  }
  function rowOf(op) {
    return rows().find((r) => r.dataset.row === op.row) || null;
  }
  function frozen() {
    return root.dataset.frozen === "1";
  }

  // --- selection ---------------------------------------------------------------

  function select(row) {
    if (!row) return;
    rows().forEach((r) => r.classList.toggle("selected", r === row));
    state.selected = row.dataset.row;
    // Support: the selected pair's sentence is marked in its answer, for context.
    document.querySelectorAll("#answer-sentences li.current").forEach((li) => li.classList.remove("current"));
    const sentence = document.getElementById("sentence-" + row.dataset.row);
    if (sentence) sentence.classList.add("current");
    row.scrollIntoView({ block: "nearest" });
    row.focus({ preventScroll: true });
  }
  function selectedRow() {
    return rows().find((r) => r.dataset.row === state.selected) || null;
  }
  function step(delta) {
    const list = rows();
    if (!list.length) return;
    const index = list.indexOf(selectedRow());
    select(list[Math.max(0, Math.min(list.length - 1, index < 0 ? 0 : index + delta))]);
  }
  function nextUnlabelled(after) {
    const list = rows();
    const start = list.indexOf(after);
    for (let i = 1; i <= list.length; i++) {
      const row = list[(start + i) % list.length];
      if (!row.dataset.current) return row;
    }
    return null;
  }

  // --- showing a label and the progress ----------------------------------------------

  function show(row, label) {
    row.dataset.current = label;
    row.classList.toggle("labelled", label !== "");
    row.querySelectorAll("button.choice").forEach((button) => {
      const on = button.value === label;
      button.classList.toggle("on", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    });
    row.querySelector("input[name=previous]").value = label;
    progressShow();
  }
  function progressShow() {
    const list = rows();
    const labelled = list.filter((r) => r.dataset.current !== "").length;
    if (root.dataset.initialLabelled === undefined) {
      root.dataset.initialLabelled = String(labelled);
      root.dataset.initialDone = document.getElementById("labels-done").textContent;
      root.dataset.initialAnswers = document.getElementById("answers-done").textContent;
      root.dataset.initialComplete = root.dataset.answerComplete;
    }
    const done = parseInt(root.dataset.initialDone, 10) + labelled - parseInt(root.dataset.initialLabelled, 10);
    document.getElementById("labels-done").textContent = done;
    document.getElementById("progress").value = done;
    const complete = list.length > 0 && labelled === list.length;
    const wasComplete = root.dataset.initialComplete === "1";
    const answers = parseInt(root.dataset.initialAnswers, 10) + (complete ? 1 : 0) - (wasComplete ? 1 : 0);
    document.getElementById("answers-done").textContent = answers;
  }

  // --- saving (the queue itself is OfflineQueue's) ---------------------------------------------

  // The work's status and active time as the server has them after a save.
  function stateShow(data) {
    const status = document.getElementById("work-status");
    if (status && data.status) status.textContent = data.status;
    const time = document.getElementById("active-time");
    if (time && data.time) time.textContent = data.time;
  }

  function refused(op, data) {
    // A refusal carries the work's state too: another tab may have started it meanwhile.
    stateShow(data);
    const row = rowOf(op);
    if ("current" in data && data.current !== null && data.current !== undefined && row) {
      // Another tab changed this label: show the stored one; later saves of this row are stale too.
      saves.drop((other) => other.row === op.row);
      show(row, String(data.current));
      OfflineQueue.alertShow(data.error || "This label was changed elsewhere.", false);
    } else if (data.kind === "conflict") {
      saves.drop(() => true);
      root.dataset.frozen = "1";
      OfflineQueue.alertShow((data.error || "The topic changed.") + " Reload the page.", true);
    } else {
      OfflineQueue.alertShow(data.error || "The label was refused.", false);
    }
  }

  const saves = OfflineQueue.create({
    // One queue per answer page, so that two tabs on different answers keep apart.
    storeKey: "judge-ops:" + root.dataset.work,
    noun: "label",
    applied: (op, data) => stateShow(data),
    refused: refused,
  });
  window.judgePage = { state: state, saves: saves };

  function choose(row, label) {
    if (frozen() || !row) return;
    const form = row.querySelector("form");
    const previous = row.dataset.current;
    const fields = {};
    for (const [name, value] of new FormData(form).entries()) {
      if (name !== "csrfmiddlewaretoken") fields[name] = value;
    }
    fields.label = label;
    fields.previous = previous;
    show(row, label);
    if (previous !== label) saves.push(form.getAttribute("action"), fields, { row: row.dataset.row });
    select(nextUnlabelled(row) || row);
  }

  // --- forms, clicks and keys ---------------------------------------------------------------

  root.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches("form.jform")) return;
    event.preventDefault();
    const button = event.submitter;
    if (button && button.value) choose(form.closest("li.jrow"), button.value);
  });
  const submitForm = document.getElementById("submit-form");
  if (submitForm) {
    submitForm.addEventListener("submit", (event) => {
      // Submitting waits for every queued label, so that nothing is left behind.
      if (saves.busy()) {
        event.preventDefault();
        OfflineQueue.alertShow("Some labels are still being saved: submit again in a moment.", false);
      }
    });
  }
  rows().forEach((row) => row.addEventListener("click", () => select(row)));

  function go(id) {
    // Leave only once everything is saved (the queue survives a reload anyway).
    const link = document.getElementById(id);
    if (link) saves.whenSaved(() => (window.location.href = link.href));
  }

  const help = document.getElementById("help");
  document.getElementById("help-open").addEventListener("click", () => help.showModal());
  document.getElementById("help-close").addEventListener("click", () => help.close());
  document.getElementById("ws-reload").addEventListener("click", () => window.location.reload());
  document.getElementById("ws-alert-close").addEventListener("click", () => {
    document.getElementById("ws-alert").hidden = true;
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.matches && event.target.matches("input[type=text], textarea, select")) return;
    if (help.open) {
      if (event.key === "Escape" || event.key === "?") help.close();
      return;
    }
    const row = selectedRow();
    const choice = row && row.querySelector('button.choice[data-key="' + event.key + '"]');
    let handled = true;
    if (choice && !frozen()) choose(row, choice.value);
    else if (event.key === "Enter" && row && row.dataset.shown !== undefined && row.dataset.shown !== "" && !frozen())
      choose(row, row.dataset.shown);
    else if (event.key === "j" || event.key === "ArrowDown") step(1);
    else if (event.key === "k" || event.key === "ArrowUp") step(-1);
    else if (event.key === "ArrowRight" || event.key === ".") go("next-answer");
    else if (event.key === "ArrowLeft" || event.key === ",") go("prev-answer");
    else if (event.key === "g") go("next-incomplete");
    else if (event.key === "?") help.showModal();
    else handled = false;
    if (handled) event.preventDefault();
  });

  progressShow(); // takes the server's counts as the baseline
  // Labels queued before a reload are shown at once, then sent.
  saves.queue.forEach((op) => {
    const row = rowOf(op);
    if (row && op.url === row.querySelector("form").getAttribute("action")) show(row, op.fields.label);
  });
  const focus = rows().find((r) => r.dataset.row === root.dataset.focus);
  select(focus || rows()[0]);
  saves.pump();
})();
