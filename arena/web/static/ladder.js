/* The ladder page follows its ladder: the part that changes (progress, leaderboard, head to
   head, matches being played) is replaced whenever the server's event stream (live.py) sends
   it again. That part is HTML the server rendered and escaped with the page's own template,
   so it goes in as HTML. */
(function () {
  "use strict";
  var box = document.getElementById("ladder-live");
  if (!box || !box.dataset.events || !window.EventSource) return;
  var state = document.getElementById("live-state");
  var events = new EventSource(box.dataset.events);
  events.addEventListener("ladder", function (e) {
    var html = JSON.parse(e.data).html;
    if (html !== box.dataset.shown) {
      box.innerHTML = html;
      box.dataset.shown = html;
      box.dataset.updates = String(Number(box.dataset.updates || 0) + 1);
    }
    state.hidden = true;
  });
  events.addEventListener("error", function () {
    state.hidden = false;
    state.textContent = "Live updates paused: lost contact with the server; retrying.";
  });
})();
