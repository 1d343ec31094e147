// nineplan's live view: subscribe to the page's Server-Sent Events and swap in each fragment the
// server re-rendered. The pages work without this script; it only saves the reload.
"use strict";

(function () {
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
    if (target.contains(document.activeElement) && document.activeElement.value) {
      waiting[name] = html;
      return;
    }
    delete waiting[name];
    // The server escaped every text it put in the fragment; the CSP forbids inline script.
    target.innerHTML = html;
  };
  document.addEventListener("focusout", function () {
    setTimeout(function () {
      for (const name of Object.keys(waiting)) {
        swap(name, waiting[name]);
      }
    }, 0);
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
