// Judging pages (ManualAssign and support): one key per label, autosave, progress.
//
// Every row is a form whose buttons POST one label (the page works without this
// script). Here the saves go through one queue kept in localStorage (one per
// answer page, so that two tabs on different answers keep apart), one at a
// time, like the nugget workspace's: a lost connection or a reload keeps them,
// and a retry is recognised by the server (the label is already the asked one).
// Each save carries the label the page showed ("previous"): if another tab
// changed it, the server refuses with the current label and the row shows it.
(function () {
  "use strict";

  const root = document.getElementById("judge");
  if (!root) return;

  const storeKey = "judge-ops:" + root.dataset.work;
  const csrf = OfflineQueue.csrfToken();

  const state = { queue: loadQueue(), sending: false, retryDelay: 1000, retryTimer: null, selected: null };
  window.judgePage = { state: state };

  function rows() {
    return Array.from(document.querySelectorAll("#rows li.jrow"));
  }
  function frozen() {
    return root.dataset.frozen === "1";
  }
  function uuid() {
    return OfflineQueue.newOpId();
  }
  function loadQueue() {
    return OfflineQueue.queueLoad(storeKey);
  }
  function saveQueue() {
    OfflineQueue.queueSave(storeKey, state.queue);
  }
  function setConnection(text, kind) {
    OfflineQueue.connectionShow(text, kind);
  }
  function alertShow(text, withReload) {
    OfflineQueue.alertShow(text, withReload);
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

  // --- the save queue -----------------------------------------------------------------

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
    if (previous !== label) {
      state.queue.push({ url: form.getAttribute("action"), fields: fields, row: row.dataset.row, opId: uuid() });
      saveQueue();
      pump();
    }
    select(nextUnlabelled(row) || row);
  }

  async function pump() {
    if (state.sending || !state.queue.length) return;
    const op = state.queue[0];
    state.sending = true;
    const body = new URLSearchParams(op.fields);
    setConnection(state.queue.length > 1 ? "Saving " + state.queue.length + " labels…" : "Saving…", "busy");
    let response;
    try {
      response = await fetch(op.url, {
        method: "POST",
        body: body,
        credentials: "same-origin",
        headers: { "HX-Request": "true", "X-CSRFToken": csrf, Accept: "application/json" },
      });
    } catch (error) {
      return retryLater("Connection lost: " + state.queue.length + " label(s) kept, retrying…");
    }
    if (response.redirected || response.status === 401 || response.status === 403) {
      return retryLater("You seem to be logged out: log in again in another tab; " + state.queue.length + " label(s) kept.");
    }
    if (response.status >= 500 || response.status === 429) {
      return retryLater("The server did not answer (" + response.status + "): " + state.queue.length + " label(s) kept, retrying…");
    }
    state.retryDelay = 1000;
    state.queue.shift();
    saveQueue();
    if (!response.ok) {
      let data = {};
      try {
        data = await response.json();
      } catch (e) {
        /* not JSON */
      }
      const row = rows().find((r) => r.dataset.row === op.row);
      if ("current" in data && data.current !== null && data.current !== undefined && row) {
        // Another tab changed this label: show the stored one; later saves of this row are stale too.
        state.queue = state.queue.filter((o) => o.row !== op.row);
        saveQueue();
        show(row, String(data.current));
        alertShow(data.error || "This label was changed elsewhere.", false);
      } else if (data.kind === "conflict") {
        state.queue = [];
        saveQueue();
        root.dataset.frozen = "1";
        alertShow((data.error || "The topic changed.") + " Reload the page.", true);
      } else {
        alertShow(data.error || "The label was refused.", false);
      }
    }
    state.sending = false;
    setConnection(state.queue.length ? "Saving…" : "Saved", state.queue.length ? "busy" : "ok");
    if (state.queue.length) pump();
  }

  function retryLater(message) {
    state.sending = false;
    setConnection(message, "lost");
    clearTimeout(state.retryTimer);
    state.retryTimer = setTimeout(pump, state.retryDelay);
    state.retryDelay = Math.min(state.retryDelay * 2, 15000);
  }

  window.addEventListener("online", () => {
    state.retryDelay = 1000;
    clearTimeout(state.retryTimer);
    pump();
  });
  window.addEventListener("beforeunload", (event) => {
    if (state.queue.length) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

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
      if (state.queue.length || state.sending) {
        event.preventDefault();
        alertShow("Some labels are still being saved: submit again in a moment.", false);
      }
    });
  }
  rows().forEach((row) => row.addEventListener("click", () => select(row)));

  function go(id) {
    const link = document.getElementById(id);
    if (link) {
      if (state.queue.length || state.sending) {
        // Leave only once everything is saved (the queue survives a reload anyway).
        const wait = setInterval(() => {
          if (!state.queue.length && !state.sending) {
            clearInterval(wait);
            window.location.href = link.href;
          }
        }, 50);
      } else {
        window.location.href = link.href;
      }
    }
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
  state.queue.forEach((op) => {
    const row = rows().find((r) => r.dataset.row === op.row);
    if (row && op.url === row.querySelector("form").getAttribute("action")) show(row, op.fields.label);
  });
  const focus = rows().find((r) => r.dataset.row === root.dataset.focus);
  select(focus || rows()[0]);
  pump();
})();
