// nineplan's live view: subscribe to the page's Server-Sent Events and swap in each fragment the
// server re-rendered. The pages work without this script; it only saves the reload.
"use strict";

(function () {
  // "for 12 min", "3 min ago": each [data-since] time counts on as the page stays open, in the
  // words the server writes (pages.duration).
  const duration = function (then) {
    let minutes = Math.max(0, Math.floor((Date.now() - then) / 60000));
    if (minutes < 1) {
      return "under a minute";
    }
    if (minutes < 60) {
      return minutes + " min";
    }
    let hours = Math.floor(minutes / 60);
    minutes = minutes % 60;
    if (hours < 48) {
      return hours + " h" + (minutes ? " " + minutes + " min" : "");
    }
    const days = Math.floor(hours / 24);
    hours = hours % 24;
    return days + " d" + (hours ? " " + hours + " h" : "");
  };
  // "held for 12 min" counts [data-since]; "3 min ago" counts [data-ago].
  const countOn = function () {
    for (const time of document.querySelectorAll("time[data-since], time[data-ago]")) {
      const then = Date.parse(time.getAttribute("datetime"));
      if (!Number.isNaN(then)) {
        time.textContent = duration(then) + (time.hasAttribute("data-ago") ? " ago" : "");
      }
    }
  };
  setInterval(countOn, 30000);

  const url = document.body.dataset.live;
  if (!url || !window.EventSource) {
    return;
  }
  const status = document.querySelector("[data-testid=live-status]");
  const say = function (text, state) {
    if (status) {
      status.textContent = text;
      status.dataset.state = state;
    }
  };
  const source = new EventSource(url);
  source.addEventListener("error", function () {
    say("Live updates interrupted; reconnecting…", "retrying");
  });
  // A fragment holding the field a person is typing in waits until they leave it.
  const waiting = {};
  const swap = function (name, html) {
    const target = document.querySelector('[data-fragment="' + name + '"]');
    if (!target || target.innerHTML === html) {
      return;
    }
    // So does one holding a card a person is moving (board.js), until it says it is idle.
    if ((target.contains(document.activeElement) && document.activeElement.value) ||
        target.querySelector("[data-grabbed]")) {
      waiting[name] = html;
      return;
    }
    delete waiting[name];
    // A folded list a person opened stays open across the swap.
    const open = new Set();
    for (const fold of target.querySelectorAll("details[data-fold][open]")) {
      open.add(fold.dataset.fold);
    }
    // The server escaped every text it put in the fragment; the CSP forbids inline script.
    target.innerHTML = html;
    for (const fold of target.querySelectorAll("details[data-fold]")) {
      if (open.has(fold.dataset.fold)) {
        fold.open = true;
      }
    }
    document.dispatchEvent(new CustomEvent("nineplan:swapped", { detail: { name: name } }));
  };
  const flush = function () {
    setTimeout(function () {
      for (const name of Object.keys(waiting)) {
        swap(name, waiting[name]);
      }
    }, 0);
  };
  document.addEventListener("focusout", flush);
  // A person's change was sent: what waited to be drawn over it is older than it (board.js).
  document.addEventListener("nineplan:sent", function (event) {
    delete waiting[event.detail.name];
  });
  document.addEventListener("nineplan:idle", flush);
  // The session list: one changed row at a time, by session name.
  source.addEventListener("rows", function (event) {
    const rows = JSON.parse(event.data);
    for (const name of Object.keys(rows)) {
      const row = document.querySelector('tr[data-session="' + CSS.escape(name) + '"]');
      if (row) {
        const template = document.createElement("template");
        template.innerHTML = rows[name];
        row.replaceWith(template.content);
      }
    }
  });
  source.addEventListener("fragments", function (event) {
    const fragments = JSON.parse(event.data);
    for (const name of Object.keys(fragments)) {
      swap(name, fragments[name]);
    }
    // The stream's first event brings every fragment: from here on the page is in step.
    say("Live: changes appear as they happen.", "open");
  });
})();
