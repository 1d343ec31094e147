// nineplan's Needs you: a person's Met or Unmet posts in the background and the live update
// redraws the list (and the queue, where an unmet's follow-up appears); the line above the
// list says what was decided, or why it was refused. The page works without this script:
// the form posts, and the board comes back saying the same.
"use strict";

(function () {
  const said = document.querySelector("[data-testid=said]");
  const say = function (text, refused) {
    if (!said) {
      return;
    }
    said.textContent = text;
    said.classList.toggle("error", refused);
    said.hidden = false;
    // Focus leaves the form the live update is about to redraw (live.js waits until it does).
    said.focus();
  };
  // The words of a page the server sent back (as text: nothing of it becomes HTML here).
  const words = function (html, selector) {
    const found = new DOMParser().parseFromString(html, "text/html").querySelector(selector);
    return found ? found.textContent.trim() : "";
  };
  document.addEventListener("submit", function (event) {
    const form = event.target.closest && event.target.closest("form[data-testid=decide]");
    const live = document.querySelector("[data-testid=live-status][data-state=open]");
    if (!form || !live || !window.fetch) {
      return; // without the live update, the form posts and the page comes back
    }
    event.preventDefault();
    const data = new FormData(form, event.submitter);
    for (const button of form.querySelectorAll("button")) {
      button.disabled = true;
    }
    fetch(form.action, { method: "POST", body: data, credentials: "same-origin" })
      .then(function (response) {
        return response.text().then(function (html) {
          if (response.ok) {
            say(words(html, "[data-testid=said]") || "Decided.", false);
          } else {
            say("Not decided: " + (words(html, "[data-testid=error]") || response.statusText), true);
          }
        });
      })
      .catch(function () {
        say("Not decided: the server could not be reached.", true);
      })
      .finally(function () {
        for (const button of form.querySelectorAll("button")) {
          button.disabled = false;
        }
        document.dispatchEvent(new CustomEvent("nineplan:idle"));
      });
  });
})();
