// nineplan's session list: the filter box narrows the rows as a person types. Without this
// script the same box is a plain GET form (`?q=`) that the server answers with the rows it keeps.
"use strict";

(function () {
  const box = document.querySelector("input[data-filter=sessions]");
  const body = document.querySelector("[data-fragment=sessions]");
  if (!box || !body) {
    return;
  }
  // A row stays when its session's name or task holds the typed text (case-insensitive), as
  // the server's filter does.
  const apply = function () {
    const words = box.value.trim().toLocaleLowerCase();
    for (const row of body.querySelectorAll("tr[data-session]")) {
      const task = row.querySelector("td.task");
      const text = (row.dataset.session + "\n" + (task ? task.textContent : "")).toLocaleLowerCase();
      row.hidden = words !== "" && !text.includes(words);
    }
  };
  box.addEventListener("input", apply);
  // Live updates replace rows: the filter applies to the new ones too.
  new MutationObserver(apply).observe(body, { childList: true, subtree: true });
  apply();
})();
