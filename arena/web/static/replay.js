/* The match page's replay viewer: steps through the frames the server put in the page
   (#replay-data), forwards and back, by the buttons, the keys (arrows, Home, End, space to play
   or pause), the slider or the move list; plays them at a chosen speed; shows the public view or
   one seat's view. The address holds the moment (#move:view) and follows its changes on an open
   page. A match still being played is followed through its event stream (server-sent events)
   for new public frames. Plain DOM, no libraries; text goes in through textContent only. */
(function () {
  "use strict";
  var source = document.getElementById("replay-data");
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var frames = data.frames;
  var names = data.seat_names;
  var legend = data.legend || {};
  var pos = 0;
  // -2: every hand (a match shown in full: its set is finished), -1: the table only (the
  // public's view before then), 0..k-1: one seat's view.
  var ALL = -2;
  var view = data.full ? ALL : -1;

  function $(id) { return document.getElementById(id); }
  function make(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // A card is an id (see the legend), [id, note], or a literal [text, colour].
  function card(c) {
    var text, colour, note = null;
    if (typeof c === "number") {
      var l = legend[c] || [String(c), ""];
      text = l[0]; colour = l[1];
    } else if (typeof c[0] === "number") {
      var k = legend[c[0]] || [String(c[0]), ""];
      text = k[0]; colour = k[1]; note = c[1];
    } else {
      text = c[0]; colour = c[1];
    }
    var node = make("span", "card c-" + (colour || "none"), text);
    if (note) {
      node.title = note;
      node.appendChild(make("small", "card-note", note));
    }
    return node;
  }

  function cards(list) {
    var box = make("span", "cards");
    list.forEach(function (c) { box.appendChild(card(c)); });
    return box;
  }

  // Rows the rulebooks draw their own way: Boom's guard card (its number over a limit per colour,
  // left to right) and Balloon's balloon (its size, the number of cards on the table).
  function tableRow(row) {
    if (row.kind === "guard") {
      var guard = make("div", "guard-card");
      guard.title = row.label + ": a colour's cards escape when their sum is over its limit";
      guard.appendChild(make("div", "guard-number", row.label));
      var limits = make("div", "guard-limits");
      row.cards.forEach(function (c) {
        var cell = make("span", "limit c-" + c[1], c[0].split(" ").pop());
        cell.title = c[0];
        limits.appendChild(cell);
      });
      guard.appendChild(limits);
      return guard;
    }
    if (row.kind === "balloon") {
      var balloon = make("div", "balloon");
      balloon.title = "balloon size: the cards on the table";
      balloon.appendChild(make("span", "balloon-size", String(row.value)));
      balloon.appendChild(make("span", "label", row.label));
      return balloon;
    }
    var line = make("div", "row");
    line.appendChild(make("span", "label", row.label));
    line.appendChild(cards(row.cards));
    return line;
  }

  // One entry per move, built when the frames or the view change; render() marks the current.
  // A move's action is in the frames only where this viewer may see it (a match shown in
  // full); then every view names it.
  function moveText(f) {
    if (!f.move) return "the deal";
    var text = names[f.move.seat];
    if (f.move.text) text += ": " + f.move.text;
    if (f.move.default) text += " (by the referee)";
    return text;
  }

  var listed = 0, listedView = null;
  function buildMoveList() {
    var list = $("move-list");
    if (listedView !== view) { clear(list); listed = 0; listedView = view; }
    for (; listed < frames.length; listed++) {
      var item = make("li");
      var button = make("button", "jump", moveText(frames[listed]));
      button.type = "button";
      button.tabIndex = -1;  // the list is one Tab stop: its current move (markMove)
      button.dataset.n = String(listed);
      item.appendChild(button);
      list.appendChild(item);
    }
  }

  function markMove() {
    var list = $("move-list");
    var old = list.querySelector("[aria-current]");
    if (old) { old.removeAttribute("aria-current"); old.tabIndex = -1; }
    var item = list.children[pos];
    if (!item) return;
    item.firstChild.setAttribute("aria-current", "step");
    item.firstChild.tabIndex = 0;
    if (list.contains(document.activeElement)) item.firstChild.focus({ preventScroll: true });
    // Keep the current move in sight inside the list, without scrolling the page.
    var top = item.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top + item.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function render() {
    if (!frames.length) {
      $("position").textContent = "no moves yet";
      return;
    }
    var f = frames[pos];
    var last = frames.length - 1;
    $("position").textContent = pos === 0 ? "the deal (0 of " + last + ")"
                                          : "move " + pos + " of " + last;
    $("scrub").max = String(last);
    $("scrub").value = String(pos);
    $("first").disabled = $("prev").disabled = pos === 0;
    $("next").disabled = $("last").disabled = pos === last;

    var move = $("move");
    clear(move);
    if (f.move) {
      var who = names[f.move.seat];
      var text = who + (f.move.text ? ": " + f.move.text : " moved");
      if (f.move.default) text += " (played by the referee for a faulted seat)";
      move.appendChild(make("span", "who", text));
      move.appendChild(make("span", "ms", " · " + f.move.ms + " ms"));
    } else {
      move.textContent = "The deal, before any move.";
    }

    var info = $("info");
    clear(info);
    f.info.forEach(function (pair) {
      info.appendChild(make("dt", null, pair[0]));
      info.appendChild(make("dd", null, pair[1]));
    });

    var table = $("table");
    clear(table);
    f.table.forEach(function (row) { table.appendChild(tableRow(row)); });

    var seats = $("seats");
    clear(seats);
    f.seats.forEach(function (s, i) {
      var box = make("div", "seat-box");
      if (i === view) box.className += " me";
      var shows = i === view || (view === ALL && f.hands);
      if (f.to_act.indexOf(i) >= 0) box.className += " to-act";
      box.dataset.seat = String(i);
      box.appendChild(make("h3", null, "seat " + i + ": " + names[i]));
      var dl = make("dl");
      s.stats.forEach(function (pair) {
        dl.appendChild(make("dt", null, pair[0]));
        dl.appendChild(make("dd", null, pair[1]));
      });
      box.appendChild(dl);
      if (s.cards.length) {
        var shown = make("div", "public-cards");
        shown.appendChild(cards(s.cards));
        box.appendChild(shown);
      }
      if (shows) {
        var hand = make("div", "hand");
        hand.appendChild(make("span", "label", "hand"));
        if (f.hands) hand.appendChild(cards(f.hands[i]));
        else hand.appendChild(make("span", "note",
                                   "hidden" + (data.withheld ? ": " + data.withheld : "")));
        box.appendChild(hand);
      }
      seats.appendChild(box);
    });

    var events = $("events");
    clear(events);
    f.events.forEach(function (e) { events.appendChild(make("li", null, e)); });
    buildMoveList();
    markMove();
    // Other parts of the page follow the moment (static/matchlogs.js: a bot's output).
    window.arenaReplayMoment = { pos: pos, move: f.move, last: pos === last };
    document.dispatchEvent(new CustomEvent("arena-replay-render",
                                           { detail: window.arenaReplayMoment }));
    if (history.replaceState) history.replaceState(null, "", "#" + pos + ":" + view);
  }

  function go(n) {
    pos = Math.max(0, Math.min(frames.length - 1, n));
    render();
  }

  // Autoplay: a move every 1/speed seconds; it stops at the last frame (a live match's player
  // waits there for the next move instead).
  var timer = null;
  function playing() { return timer !== null; }
  function pause() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    $("play").textContent = "▶ Play";
    $("play").setAttribute("aria-pressed", "false");
  }
  function tick() {
    if (pos < frames.length - 1) go(pos + 1);
    if (pos >= frames.length - 1 && !data.live) { pause(); return; }
    timer = setTimeout(tick, 1000 / Number($("speed").value));
  }
  function play() {
    if (pos >= frames.length - 1 && !data.live) go(0);  // from the start once at the end
    $("play").textContent = "❚❚ Pause";
    $("play").setAttribute("aria-pressed", "true");
    timer = setTimeout(tick, 1000 / Number($("speed").value));
  }
  function toggle() { if (playing()) pause(); else play(); }

  // The moment in the address: "#12:0" is move 12 in seat 0's view (-1: the public's).
  function fromHash() {
    var hash = /^#(\d+):(-?\d+)$/.exec(location.hash);
    if (!hash) return false;
    view = Math.max(data.full ? ALL : -1, Math.min(names.length - 1, Number(hash[2])));
    $("view").value = String(view);
    pos = Math.min(Number(hash[1]), Math.max(0, frames.length - 1));
    return true;
  }

  $("first").addEventListener("click", function () { go(0); });
  $("prev").addEventListener("click", function () { go(pos - 1); });
  $("next").addEventListener("click", function () { go(pos + 1); });
  $("last").addEventListener("click", function () { go(frames.length - 1); });
  $("scrub").addEventListener("input", function (e) { go(Number(e.target.value)); });
  $("view").addEventListener("change", function (e) { view = Number(e.target.value); render(); });
  $("play").addEventListener("click", toggle);
  $("move-list").addEventListener("click", function (e) {
    var n = e.target.dataset && e.target.dataset.n;
    if (n !== undefined) { pause(); go(Number(n)); }
  });
  function help(show) {
    var box = $("shortcuts");
    box.hidden = show === undefined ? !box.hidden : !show;
    $("help-button").setAttribute("aria-expanded", String(!box.hidden));
  }
  $("help-button").addEventListener("click", function () { help(); });
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT")) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "?") { help(); e.preventDefault(); return; }
    if (e.key === "Escape") { help(false); return; }
    // Up and down move in the move list (when it has the focus), as left and right do anywhere.
    var inList = $("move-list").contains(e.target);
    var handled = true;
    if (e.key === "ArrowRight" || (inList && e.key === "ArrowDown")) go(pos + 1);
    else if (e.key === "ArrowLeft" || (inList && e.key === "ArrowUp")) go(pos - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(frames.length - 1);
    else if (e.key === " " && (!e.target || e.target.tagName !== "BUTTON")) toggle();
    else handled = false;
    if (handled && e.key !== " ") pause();
    if (handled) e.preventDefault();
  });
  // A link to another moment of this match, or an address edited by hand, on the open page.
  window.addEventListener("hashchange", function () { if (fromHash()) { pause(); render(); } });

  // Position and view from the address (#move:view), so a moment of a match can be linked.
  if (!fromHash() && data.live) {
    pos = Math.max(0, frames.length - 1);  // a live match opens at its latest move
  }
  render();

  if (data.live) follow(data.live);

  // A match still being played: its event stream (live.py) sends the public frames from the
  // ones this page has on, then each new move's; once the match is over the page reloads for
  // its full replay. The browser reconnects by itself, resuming from the last frame it had.
  function follow(url) {
    var note = $("live-note");
    note.hidden = false;
    note.textContent = "Live: this match is being played; new moves appear as they happen.";
    var sep = url.indexOf("?") >= 0 ? "&" : "?";
    var events = new EventSource(url + sep + "since=" + frames.length);
    events.addEventListener("frames", function (e) {
      var live = JSON.parse(e.data);
      var following = pos >= frames.length - 1;
      live.frames.forEach(function (f) { if (f.n === frames.length) frames.push(f); });
      $("match-status").textContent = live.status;
      if (following) pos = Math.max(0, frames.length - 1);
      render();
      note.textContent = "Live: this match is being played; new moves appear as they happen.";
      if (live.done) {
        events.close();
        note.textContent = "The match is over; loading its full replay…";
        location.reload();
      }
    });
    events.addEventListener("failed", function (e) {
      events.close();
      note.textContent = "Live: the server cannot follow this match (" +
        JSON.parse(e.data).error + "); reload the page to try again.";
    });
    events.addEventListener("error", function () {
      if (events.readyState !== EventSource.CLOSED) {
        note.textContent = "Live: lost contact with the server; retrying.";
      }
    });
  }
})();
