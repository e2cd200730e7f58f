/* The replay's owner part (templates/_match_logs.html): with a key typed into the form (kept in
   this tab's sessionStorage, in the bot page's slots: static/faultlogs.js, sent in a header to
   /api/ladders/{ladder}/matches/{index}/logs, never in an address), shows beside each move what
   the moving seat's bot wrote while deciding it, and at the last move what it wrote after; text
   through textContent only. A refused key is forgotten. */
(function () {
  "use strict";
  var box = document.getElementById("match-logs");
  var form = document.getElementById("mlogs-form");
  if (!box || !form) return;
  var kind = document.getElementById("mlogs-kind");
  var seatBot = document.getElementById("mlogs-seat");
  var input = document.getElementById("mlogs-key");
  var status = document.getElementById("mlogs-status");
  var panel = document.getElementById("bot-output");
  var title = document.getElementById("bot-output-title");
  var text = document.getElementById("bot-output-text");
  var HEADERS = { owner: "X-Owner-Key", bot: "X-Bot-Key", admin: "X-Admin-Key" };
  var bots = Array.prototype.map.call(seatBot.options, function (o) { return o.value; });
  var logs = null;  // seat -> {moves: {move index: text}, tail, bot}

  function family(bot) { return bot.split("@")[0]; }
  function slot(k, bot) {
    if (k === "owner") return "arena-owner-key:" + family(bot);
    if (k === "bot") return "arena-bot-key:" + bot;
    return "arena-admin-key";
  }
  // A key kept for any bot of this match (or the admin key).
  function stored() {
    var admin = sessionStorage.getItem(slot("admin"));
    if (admin) return { kind: "admin", key: admin };
    for (var i = 0; i < bots.length; i++) {
      var ks = ["owner", "bot"];
      for (var j = 0; j < ks.length; j++) {
        var key = sessionStorage.getItem(slot(ks[j], bots[i]));
        if (key) return { kind: ks[j], key: key, bot: bots[i] };
      }
    }
    return null;
  }
  function forget(choice) {
    if (choice) sessionStorage.removeItem(slot(choice.kind, choice.bot));
    logs = null;
    show(window.arenaReplayMoment);
  }

  function show(moment) {
    if (!logs || !moment) { panel.hidden = true; return; }
    var parts = [];
    if (moment.move && logs[moment.move.seat]) {
      var log = logs[moment.move.seat];
      var said = log.moves[moment.pos - 1];
      parts.push([log.bot + " while deciding this move", said || "(nothing)"]);
    }
    if (moment.last) {
      Object.keys(logs).forEach(function (seat) {
        if (logs[seat].tail) parts.push([logs[seat].bot + " after its last move", logs[seat].tail]);
      });
    }
    if (!parts.length) { panel.hidden = true; return; }
    title.textContent = parts.map(function (p) { return p[0]; }).join("; ");
    text.textContent = parts.map(function (p) { return p[1]; }).join("\n");
    panel.hidden = false;
  }

  function take(body) {
    logs = {};
    var lines = 0;
    body.seats.forEach(function (s) {
      var moves = {};
      s.moves.forEach(function (m) { moves[m[0]] = m[1]; lines += 1; });
      logs[s.seat] = { moves: moves, tail: s.tail, bot: s.bot };
    });
    status.textContent = body.seats.length
      ? "Showing the output of " + body.seats.map(function (s) { return s.bot; }).join(", ") +
        " beside " + lines + " of its moves." + (body.closed.length ? " This key does not open the other seats." : "")
      : "The key opens these seats, but no output of theirs is kept (a remote bot, or rotated away).";
    show(window.arenaReplayMoment);
  }

  function load(choice) {
    var headers = {};
    headers[HEADERS[choice.kind]] = choice.key;
    status.textContent = "Loading…";
    fetch(box.dataset.api, { headers: headers, cache: "no-store" })
      .then(function (r) {
        return r.json().then(function (body) {
          if (r.ok) { take(body); return; }
          if (r.status === 401 || r.status === 403) forget(choice);
          status.textContent = (body.error && body.error.message) || "the server refused (" + r.status + ")";
        });
      })
      .catch(function (err) { status.textContent = "Could not reach the server: " + err; });
  }

  document.addEventListener("arena-replay-render", function (e) { show(e.detail); });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var choice = { kind: kind.value, key: input.value.trim(), bot: seatBot.value };
    if (!choice.key) return;
    sessionStorage.setItem(slot(choice.kind, choice.bot), choice.key);
    input.value = "";
    load(choice);
  });
  document.getElementById("mlogs-forget").addEventListener("click", function () {
    ["owner", "bot"].forEach(function (k) {
      bots.forEach(function (b) { sessionStorage.removeItem(slot(k, b)); });
    });
    sessionStorage.removeItem(slot("admin"));
    document.dispatchEvent(new Event("arena-key-forgotten"));
    forget(null);
    status.textContent = "The key is forgotten.";
  });

  var saved = stored();
  if (saved) {
    kind.value = saved.kind;
    if (saved.bot) seatBot.value = saved.bot;
    box.open = true;
    load(saved);
  }
})();
