// nineplan's board: move a queued card before another by drag and drop, or from the keyboard
// (focus a card, Space picks it up, the arrow keys move it, Space or Enter puts it down,
// Escape puts it back). Either way the card's own "move before" form is posted, with its
// CSRF token, as it is without JavaScript; the live update then redraws the queue. The page
// works without this script: each card's buttons and "move before" field steer it.
"use strict";

(function () {
  const announcer = document.querySelector("[data-testid=announce]");
  const say = function (text) {
    if (announcer) {
      announcer.textContent = text;
    }
  };
  const queue = function () {
    return document.querySelector("[data-testid=queue]");
  };
  const cards = function () {
    const list = queue();
    return list ? Array.from(list.querySelectorAll(":scope > [data-testid=card]")) : [];
  };
  const goal = function (card) {
    const link = card.querySelector(".goal");
    return link ? link.textContent.trim() : card.dataset.planId;
  };

  // Steering is over: the live update may redraw the queue again (live.js waits until then).
  const idle = function () {
    for (const card of document.querySelectorAll("[data-grabbed]")) {
      delete card.dataset.grabbed;
    }
    document.dispatchEvent(new CustomEvent("nineplan:idle"));
  };
  // The card to focus once the live update has redrawn the queue.
  let refocus = null;
  // Put the queue's cards back in the order `ids` (a cancelled or refused move).
  const restore = function (ids) {
    const list = queue();
    for (const id of ids) {
      const card = list.querySelector(':scope > [data-plan-id="' + CSS.escape(id) + '"]');
      if (card) {
        list.appendChild(card);
      }
    }
  };
  const post = function (card, before, start) {
    const form = card.querySelector("form[data-testid=move-before]");
    if (!form) {
      return;
    }
    const data = new FormData(form);
    if (before) {
      data.set("before", before);
    } else {
      data.delete("before");
      data.set("position", "back");
    }
    refocus = card.dataset.planId;
    // A redraw of the queue that waited while the card was held predates this move: drop it
    // (live.js), or putting the card down would show the queue from before the move.
    document.dispatchEvent(new CustomEvent("nineplan:sent", { detail: { name: "queue" } }));
    fetch(form.action, { method: "POST", body: data, credentials: "same-origin" })
      .then(function (response) {
        if (response.ok) {
          const live = document.querySelector("[data-testid=live-status][data-state=open]");
          if (!live) {
            window.location.reload();
          }
          return;
        }
        return response.text().then(function (html) {
          // Read the refusal's words; nothing of the response is put into the page as HTML.
          const page = new DOMParser().parseFromString(html, "text/html");
          const error = page.querySelector("[data-testid=field-error] [data-testid=reason], [data-testid=error]");
          const reason = error ? error.textContent.trim() : response.statusText;
          if (start) {
            restore(start);
          }
          refuse(card, reason);
          say("Not moved: " + reason);
        });
      })
      .catch(function () {
        say("Not moved: the server could not be reached.");
      })
      .finally(function () {
        idle();
      });
  };
  // The reason a move was refused, beside the card's "move before" field (as text).
  const refuse = function (card, reason) {
    const form = card.querySelector("form[data-testid=move-before]");
    let line = form.querySelector("[data-testid=field-error]");
    if (!line) {
      line = document.createElement("p");
      line.className = "error field-error";
      line.dataset.testid = "field-error";
      line.dataset.field = "before";
      line.setAttribute("role", "alert");
      form.appendChild(line);
    }
    line.textContent = reason;
  };
  // With this script the "move before" field posts in the background too, so that a refusal
  // stays beside the field while the live update redraws the rest.
  document.addEventListener("submit", function (event) {
    const form = event.target.closest && event.target.closest("form[data-testid=move-before]");
    const card = form && form.closest("[data-testid=queue] > [data-testid=card]");
    if (!card) {
      return;
    }
    const before = form.querySelector("input[name=before]").value.trim();
    if (before) {
      event.preventDefault();
      post(card, before, null);
    }
  });
  // Where `card` now stands among the cards: the card it precedes, or none (the back).
  const settle = function (card, start) {
    const after = card.nextElementSibling;
    const order = cards();
    const rank = order.indexOf(card);
    if (order.join() === start.join()) {
      say(goal(card) + " stays where it was.");
      idle();
      return;
    }
    say("Moved " + goal(card) + " to place " + (rank + 1) + ".");
    post(card, after ? after.dataset.planId : null, start);
  };

  // -- drag and drop ------------------------------------------------------------------
  let dragged = null;
  const clearMarks = function () {
    for (const card of cards()) {
      card.classList.remove("drop-before", "drop-after");
    }
  };
  const half = function (card, event) {
    const box = card.getBoundingClientRect();
    return event.clientY < box.top + box.height / 2 ? "before" : "after";
  };
  document.addEventListener("dragstart", function (event) {
    const card = event.target.closest && event.target.closest("[data-testid=queue] > [data-testid=card]");
    if (!card) {
      return;
    }
    dragged = card;
    card.dataset.grabbed = "drag";
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", card.dataset.planId);
  });
  document.addEventListener("dragover", function (event) {
    const card = dragged && event.target.closest && event.target.closest("[data-testid=queue] > [data-testid=card]");
    if (!card || card === dragged) {
      return;
    }
    event.preventDefault();
    clearMarks();
    card.classList.add(half(card, event) === "before" ? "drop-before" : "drop-after");
  });
  document.addEventListener("drop", function (event) {
    const card = dragged && event.target.closest && event.target.closest("[data-testid=queue] > [data-testid=card]");
    if (!card || card === dragged) {
      return;
    }
    event.preventDefault();
    const start = cards().map(function (c) { return c.dataset.planId; });
    card.parentNode.insertBefore(dragged, half(card, event) === "before" ? card : card.nextElementSibling);
    const moved = dragged;
    dragged = null;
    clearMarks();
    settle(moved, start);
  });
  document.addEventListener("dragend", function () {
    if (dragged) {
      dragged = null;
      idle();
    }
    clearMarks();
  });

  // -- the keyboard -------------------------------------------------------------------
  let held = null;
  let heldFrom = [];
  const pickUp = function (card) {
    held = card;
    heldFrom = cards().map(function (c) { return c.dataset.planId; });
    card.dataset.grabbed = "keys";
    say("Picked up " + goal(card) + ", place " + (heldFrom.indexOf(card.dataset.planId) + 1) +
        " of " + heldFrom.length + ". Arrow keys move it, Space puts it down, Escape cancels.");
  };
  const putDown = function (cancel) {
    const card = held;
    held = null;
    if (cancel) {
      restore(heldFrom);
      card.focus();
      say(goal(card) + " is back where it was.");
      idle();
      return;
    }
    card.focus();
    settle(card, heldFrom);
  };
  const step = function (card, by) {
    const order = cards();
    const rank = order.indexOf(card);
    const to = Math.max(0, Math.min(order.length - 1, rank + by));
    if (to === rank) {
      return;
    }
    card.parentNode.insertBefore(card, to > rank ? order[to].nextElementSibling : order[to]);
    card.focus();
    say(goal(card) + ": place " + (to + 1) + " of " + order.length + ".");
  };
  document.addEventListener("keydown", function (event) {
    const card = event.target.closest && event.target.closest("[data-testid=queue] > [data-testid=card]");
    if (!card || event.target !== card) {
      return; // a key in the card's own buttons and fields does what it always does
    }
    const keys = { ArrowUp: -1, ArrowDown: 1, Home: -Infinity, End: Infinity };
    if (held === card && event.key in keys) {
      event.preventDefault();
      step(card, keys[event.key]);
    } else if (event.key === " " || event.key === "Enter") {
      event.preventDefault();
      if (held === card) {
        putDown(false);
      } else if (!held) {
        pickUp(card);
      }
    } else if (event.key === "Escape" && held === card) {
      event.preventDefault();
      putDown(true);
    }
  });

  // Every redraw brings new cards: make them draggable and focusable again.
  const prepare = function () {
    const hint = document.querySelector("[data-testid=board-hint]");
    for (const card of cards()) {
      if (!card.querySelector("form[data-testid=move-before]")) {
        continue;
      }
      card.draggable = true;
      card.tabIndex = 0;
      if (hint) {
        card.setAttribute("aria-describedby", hint.id);
      }
    }
    if (hint && cards().length > 1) {
      hint.hidden = false;
    }
    if (refocus) {
      const card = document.querySelector('[data-testid=queue] > [data-plan-id="' + CSS.escape(refocus) + '"]');
      if (card) {
        card.focus();
      }
      refocus = null;
    }
  };
  document.addEventListener("nineplan:swapped", function (event) {
    if (event.detail.name === "queue") {
      prepare();
    }
  });
  prepare();
})();
