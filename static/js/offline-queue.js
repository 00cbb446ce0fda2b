// What the assessors' saving pages share (the nugget workspace and the judging
// pages): the CSRF token, ids for operations, a queue of unsent changes kept in
// localStorage so that a lost connection or a reload loses nothing, and the
// connection and conflict messages.
(function () {
  "use strict";

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

  function queueLoad(storeKey) {
    try {
      return JSON.parse(localStorage.getItem(storeKey) || "[]");
    } catch (e) {
      return [];
    }
  }

  function queueSave(storeKey, queue) {
    try {
      if (queue.length) localStorage.setItem(storeKey, JSON.stringify(queue));
      else localStorage.removeItem(storeKey);
    } catch (e) {
      /* private mode: the queue still lives in memory */
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

  window.OfflineQueue = { csrfToken, newOpId, queueLoad, queueSave, connectionShow, alertShow };
})();
