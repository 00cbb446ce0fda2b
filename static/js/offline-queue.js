// The save queue of every assessor page (the nugget workspace and the judging pages).
//
// A page hands each change to `OfflineQueue.create(...).push(url, fields)`. The
// queue keeps the unsent changes in localStorage (so a lost connection, a crash
// or a reload loses nothing), sends them one at a time with an operation id of
// their own (`op_id`: the server applies a replayed save once and answers it as
// the first time), retries with a growing delay while the server cannot be
// reached, warns before the page is left with changes unsent, and shows the
// connection's state. The page decides only what an answer means to it:
// `applied(op, data)` for a change the server took, `refused(op, data, status)`
// for one it refused (the op is already off the queue).
(function () {
  "use strict";

  const RETRY_FIRST_MS = 1000;
  const RETRY_MAX_MS = 15000;

  function csrfToken() {
    let token = "";
    try {
      token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["x-csrftoken"] || "";
    } catch (e) {
      token = "";
    }
    return token || (document.querySelector("input[name=csrfmiddlewaretoken]") || {}).value || "";
  }

  // An id of its own for each operation: the server recognises a retry by it.
  function newOpId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return "op-" + Date.now() + "-" + Math.random().toString(16).slice(2);
  }

  function stored(storeKey) {
    try {
      return JSON.parse(localStorage.getItem(storeKey) || "[]");
    } catch (e) {
      return [];
    }
  }

  function connectionShow(text, kind) {
    const el = document.getElementById("connection");
    el.textContent = text;
    el.className = "conn " + kind;
  }

  function alertShow(text, withReload) {
    document.getElementById("ws-alert-text").textContent = text;
    document.getElementById("ws-reload").hidden = !withReload;
    document.getElementById("ws-alert").hidden = false;
  }

  function alertHide() {
    document.getElementById("ws-alert").hidden = true;
  }

  function body(op) {
    const data = new URLSearchParams();
    for (const [name, value] of Object.entries(op.fields)) {
      [].concat(value).forEach((v) => data.append(name, v));
    }
    data.set("op_id", op.opId);
    return data;
  }

  async function json(response) {
    try {
      return await response.json();
    } catch (e) {
      return {};
    }
  }

  // options: storeKey, noun ("label" or "change"), applied(op, data), refused(op, data, status) (which returns
  // true when the refusal lost nothing the person made, as a refused submit of a saved list),
  // and optionally beforeSend(op) (called before every attempt) and unsaved() (other unsaved input).
  function create(options) {
    const csrf = csrfToken();
    const saves = { queue: stored(options.storeKey), sending: false, retryDelay: RETRY_FIRST_MS, retryTimer: null };

    function save() {
      try {
        if (saves.queue.length) localStorage.setItem(options.storeKey, JSON.stringify(saves.queue));
        else localStorage.removeItem(options.storeKey);
      } catch (e) {
        /* private mode: the queue still lives in memory */
      }
    }

    function kept() {
      return saves.queue.length + " " + options.noun + "(s) kept";
    }

    function push(url, fields, extra) {
      saves.queue.push(Object.assign({}, extra || {}, { url: url, fields: fields, opId: newOpId() }));
      save();
      pump();
    }

    function drop(unwanted) {
      saves.queue = saves.queue.filter((op) => !unwanted(op));
      save();
    }

    function busy() {
      return saves.queue.length > 0 || saves.sending;
    }

    function retryLater(message) {
      saves.sending = false;
      connectionShow(message, "lost");
      clearTimeout(saves.retryTimer);
      saves.retryTimer = setTimeout(pump, saves.retryDelay);
      saves.retryDelay = Math.min(saves.retryDelay * 2, RETRY_MAX_MS);
    }

    async function pump() {
      if (saves.sending || !saves.queue.length) return;
      const op = saves.queue[0];
      saves.sending = true;
      if (options.beforeSend) {
        options.beforeSend(op);
        save();
      }
      const many = saves.queue.length > 1;
      connectionShow(many ? "Saving " + saves.queue.length + " " + options.noun + "s…" : "Saving…", "busy");
      let response;
      try {
        response = await fetch(op.url, {
          method: "POST",
          body: body(op),
          credentials: "same-origin",
          headers: { "X-CSRFToken": csrf, Accept: "application/json" },
        });
      } catch (error) {
        return retryLater("Connection lost: " + kept() + ", retrying…");
      }
      if (response.redirected || response.status === 401 || response.status === 403) {
        return retryLater("You seem to be logged out: log in again in another tab; " + kept() + ".");
      }
      if (response.status >= 500 || response.status === 0 || response.status === 429) {
        return retryLater("The server did not answer (" + response.status + "): " + kept() + ", retrying…");
      }
      saves.retryDelay = RETRY_FIRST_MS;
      const data = await json(response);
      saves.queue.shift();
      save();
      let nothingLost = response.ok;
      if (response.ok) await options.applied(op, data);
      else nothingLost = options.refused(op, data, response.status) === true;
      saves.sending = false;
      if (saves.queue.length) {
        connectionShow("Saving…", "busy");
        pump();
      } else {
        // A refused change is not saved: the pill must not say otherwise while the alert says why.
        connectionShow(nothingLost ? "Saved" : "Not saved", nothingLost ? "ok" : "lost");
      }
    }

    // Run `then` once everything queued is saved (at once if nothing is).
    function whenSaved(then) {
      if (!busy()) return then();
      const wait = setInterval(() => {
        if (!busy()) {
          clearInterval(wait);
          then();
        }
      }, 50);
    }

    window.addEventListener("online", () => {
      saves.retryDelay = RETRY_FIRST_MS;
      clearTimeout(saves.retryTimer);
      pump();
    });
    window.addEventListener("beforeunload", (event) => {
      if (saves.queue.length || (options.unsaved && options.unsaved())) {
        event.preventDefault();
        event.returnValue = "";
      }
    });

    return Object.assign(saves, { push, drop, busy, pump, whenSaved });
  }

  window.OfflineQueue = { create, csrfToken, connectionShow, alertShow, alertHide };
})();
