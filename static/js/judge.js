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

  // After the last label of an answer the page moves on by itself, after this pause (to see the label land).
  const ADVANCE_MS = 600;

  const state = { selected: null, advance: null, confirmed: false };

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
    reveal(row);
    row.focus({ preventScroll: true });
    marksShow(row);
  }
  // The bar stays at the top of the window (.judge-sticky): its height, as --judge-bar-height, is the rows'
  // scroll-margin-top (and the support answer's sticky top), so that a row scrolled to is never under it.
  const sticky = document.getElementById("judge-sticky");
  function barMeasure() {
    const height = sticky ? sticky.getBoundingClientRect().height : 0;
    document.documentElement.style.setProperty("--judge-bar-height", height + "px");
    return height;
  }
  barMeasure();
  if (sticky && window.ResizeObserver) new ResizeObserver(barMeasure).observe(sticky);
  // The selected row comes wholly into view below the bar; one taller than the room there shows its top.
  function reveal(row) {
    const barHeight = barMeasure();
    const barBottom = sticky ? Math.max(0, sticky.getBoundingClientRect().bottom) : 0;
    const box = row.getBoundingClientRect();
    if (box.height <= window.innerHeight - barHeight) {
      row.scrollIntoView({ block: "nearest" });
    } else if (box.top < barBottom || box.top > window.innerHeight * 0.75) {
      row.scrollIntoView({ block: "start" });
    }
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
    if (!document.getElementById("labels-done")) return; // waiting: nothing counts yet
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

  // --- reading help: the words a row shares with what it is judged against ------------------------

  function marksShow(row) {
    const answer = document.querySelector("#answer-sentences, #answer-text");
    const nugget = row.querySelector(".nugget-words");
    if (!answer || !nugget) return; // support rows are marked once, at the start
    Highlight.clear(answer);
    document.querySelectorAll("#rows .nugget-words").forEach((words) => Highlight.clear(words));
    const shared = Highlight.shared(Highlight.words(nugget.textContent), Highlight.words(answer.textContent));
    Highlight.mark(answer, shared);
    Highlight.mark(nugget, shared);
  }
  function pairMarksShow() {
    rows().forEach((row) => {
      const sentence = row.querySelector(".pair-sentence");
      const passage = row.querySelector(".segment-box");
      if (!sentence || !passage) return;
      const shared = Highlight.shared(Highlight.words(sentence.textContent), Highlight.words(passage.textContent));
      Highlight.mark(sentence, shared);
      Highlight.mark(passage, shared);
    });
  }

  // --- finishing: the next answer, the topic's submit -------------------------------------------

  function answerComplete() {
    const list = rows();
    return list.length > 0 && list.every((r) => r.dataset.current !== "");
  }
  function topicComplete() {
    const done = parseInt(document.getElementById("labels-done").textContent, 10);
    const total = parseInt(document.getElementById("labels-total").textContent, 10);
    return total > 0 && done >= total;
  }
  function advanceCancel() {
    if (state.advance) clearTimeout(state.advance);
    state.advance = null;
  }
  // The answer's last label is in: go to the next answer with labels missing, or offer the submit.
  // Leaving waits for the queue to empty (and the queue is kept in the browser anyway).
  function answerFinished() {
    const allDone = document.getElementById("all-done");
    if (topicComplete()) {
      if (allDone) allDone.hidden = false;
      return;
    }
    if (!document.getElementById("next-incomplete")) return;
    OfflineQueue.connectionShow("Answer done: next one…", "busy");
    state.advance = setTimeout(() => {
      state.advance = null;
      go("next-incomplete");
    }, ADVANCE_MS);
  }

  const confirmDialog = document.getElementById("submit-confirm");
  function confirmOpen() {
    if (!confirmDialog) return;
    advanceCancel();
    confirmDialog.querySelector(".confirm-done").textContent = document.getElementById("labels-done").textContent;
    confirmDialog.showModal();
  }

  function choose(row, label) {
    if (frozen() || !row) return;
    hintHide();
    const wasComplete = answerComplete();
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
    if (!wasComplete && answerComplete()) answerFinished();
    else {
      const allDone = document.getElementById("all-done");
      if (allDone) allDone.hidden = !topicComplete();
    }
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
      } else if (!state.confirmed) {
        // Submitting freezes the topic: ask first.
        event.preventDefault();
        confirmOpen();
      }
    });
  }
  if (confirmDialog) {
    document.getElementById("submit-confirm-no").addEventListener("click", () => confirmDialog.close());
    document.getElementById("submit-confirm-yes").addEventListener("click", () => {
      state.confirmed = true;
      confirmDialog.close();
      saves.whenSaved(() => submitForm.requestSubmit());
    });
  }
  const allDoneSubmit = document.getElementById("all-done-submit");
  if (allDoneSubmit) allDoneSubmit.addEventListener("click", confirmOpen);
  rows().forEach((row) =>
    row.addEventListener("click", () => {
      advanceCancel();
      select(row);
    })
  );

  function go(id) {
    // Leave only once everything is saved (the queue survives a reload anyway).
    const link = document.getElementById(id);
    if (link) saves.whenSaved(() => (window.location.href = link.href));
  }

  const help = document.getElementById("help");
  // One dialog: the guidelines first (h), then the keys (?).
  function helpOpen(part) {
    advanceCancel();
    if (!help.open) help.showModal();
    const target = document.getElementById(part === "guide" ? "guidelines" : "help-keys");
    if (target) target.scrollIntoView({ block: "start" });
  }
  document.getElementById("help-open").addEventListener("click", () => helpOpen("keys"));
  document.getElementById("guide-open").addEventListener("click", () => helpOpen("guide"));
  const notesOpen = document.getElementById("notes-open");
  if (notesOpen) notesOpen.addEventListener("click", () => helpOpen("guide"));
  document.getElementById("help-close").addEventListener("click", () => help.close());
  document.getElementById("ws-reload").addEventListener("click", () => window.location.reload());
  document.getElementById("ws-alert-close").addEventListener("click", () => {
    document.getElementById("ws-alert").hidden = true;
  });

  // --- the keys' hint: a key that does nothing here says which keys do ----------------------------

  // Pages differ in their label keys (s p n, y n, 0-5, 1 2 0): a key another page uses, pressed here, would
  // otherwise be lost without a word. The hint lists the selected row's keys, read from its buttons.
  const HINT_MS = 4000;
  const hint = document.getElementById("key-hint");
  let hintTimer = null;

  function hintHide() {
    if (hintTimer) clearTimeout(hintTimer);
    hintTimer = null;
    if (hint) hint.hidden = true;
  }
  function keysText(row) {
    const buttons = Array.from((row || root).querySelectorAll("button.choice[data-key]"));
    const named = new Map();
    buttons.forEach((button) => {
      const name = button.querySelector(".choice-name");
      if (!named.has(button.dataset.key)) named.set(button.dataset.key, (name || button).textContent.trim());
    });
    const labels = Array.from(named, ([key, name]) => key + " " + name).join(", ");
    const item = hint.dataset.item || "answer";
    const moves = "j k rows; ← → " + item + "s; ? every key";
    return "Keys here: " + (labels ? labels + "; " : "") + moves + ".";
  }
  // labelKey: the key labels rows here, but the topic is submitted (frozen), so it did nothing.
  function hintShow(key, row, labelKey) {
    if (!hint) return;
    hint.textContent = labelKey
      ? "“" + key + "”: this topic is submitted, its labels are frozen."
      : "“" + key + "” does nothing here. " + keysText(row);
    // Next to the selected row's buttons, where the eyes are; in the bar when there is no row.
    const place = (row && row.querySelector("form")) || sticky || root;
    if (hint.parentElement !== place) place.appendChild(hint);
    hint.hidden = false;
    if (hintTimer) clearTimeout(hintTimer);
    hintTimer = setTimeout(hintHide, HINT_MS);
  }
  // Only a printable key earns the hint: Space, Tab, Shift, Escape, Page Down... keep their own meaning.
  function printable(event) {
    return event.key.length === 1 && event.key.trim() !== "";
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.matches && event.target.matches("input[type=text], textarea, select")) return;
    if (help.open) {
      if (event.key === "Escape" || event.key === "?" || event.key === "h") help.close();
      return;
    }
    if (confirmDialog && confirmDialog.open) return; // the dialog's buttons and Esc answer it
    advanceCancel(); // a key during the pause keeps the assessor on this answer
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
    else if (event.key === "?") helpOpen("keys");
    else if (event.key === "h") helpOpen("guide");
    else handled = false;
    if (handled) {
      hintHide();
      event.preventDefault();
    } else if (printable(event)) hintShow(event.key, row, Boolean(choice));
  });

  progressShow(); // takes the server's counts as the baseline
  // Labels queued before a reload are shown at once, then sent.
  saves.queue.forEach((op) => {
    const row = rowOf(op);
    if (row && op.url === row.querySelector("form").getAttribute("action")) show(row, op.fields.label);
  });
  pairMarksShow();
  const focus = rows().find((r) => r.dataset.row === root.dataset.focus);
  select(focus || rows()[0]);
  saves.pump();
})();
