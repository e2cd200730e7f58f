/* The match page's replay viewer: steps through the frames the server put in the page
   (#replay-data), forwards and back, in the public view or one seat's view. A match still
   being played is followed by polling its live URL once a second for new public frames.
   Plain DOM, no libraries; text goes in through textContent only. */
(function () {
  "use strict";
  var source = document.getElementById("replay-data");
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var frames = data.frames;
  var names = data.seat_names;
  var legend = data.legend || {};
  var pos = 0;
  var view = -1;

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
      var text = who + (view === f.move.seat && f.move.text ? ": " + f.move.text : " moved");
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
    f.table.forEach(function (row) {
      var line = make("div", "row");
      line.appendChild(make("span", "label", row.label));
      line.appendChild(cards(row.cards));
      table.appendChild(line);
    });

    var seats = $("seats");
    clear(seats);
    f.seats.forEach(function (s, i) {
      var box = make("div", "seat-box");
      if (i === view) box.className += " me";
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
      if (i === view) {
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
    if (history.replaceState) history.replaceState(null, "", "#" + pos + ":" + view);
  }

  function go(n) {
    pos = Math.max(0, Math.min(frames.length - 1, n));
    render();
  }

  $("first").addEventListener("click", function () { go(0); });
  $("prev").addEventListener("click", function () { go(pos - 1); });
  $("next").addEventListener("click", function () { go(pos + 1); });
  $("last").addEventListener("click", function () { go(frames.length - 1); });
  $("scrub").addEventListener("input", function (e) { go(Number(e.target.value)); });
  $("view").addEventListener("change", function (e) { view = Number(e.target.value); render(); });
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "SELECT" || e.target.tagName === "INPUT")) return;
    if (e.key === "ArrowRight") go(pos + 1);
    else if (e.key === "ArrowLeft") go(pos - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(frames.length - 1);
  });

  // Position and view from the address (#move:view), so a moment of a match can be linked.
  var hash = /^#(\d+):(-?\d+)$/.exec(location.hash);
  if (hash) {
    view = Math.max(-1, Math.min(names.length - 1, Number(hash[2])));
    $("view").value = String(view);
    pos = Math.min(Number(hash[1]), Math.max(0, frames.length - 1));
  } else if (data.live) {
    pos = Math.max(0, frames.length - 1);  // a live match opens at its latest move
  }
  render();

  if (data.live) follow(data.live);

  function follow(url) {
    var note = $("live-note");
    note.hidden = false;
    note.textContent = "Live: this match is being played; new moves appear as they happen.";
    var stopped = false;
    function poll() {
      if (stopped) return;
      var sep = url.indexOf("?") >= 0 ? "&" : "?";
      fetch(url + sep + "since=" + frames.length, { headers: { "Accept": "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (live) {
          var following = pos >= frames.length - 1;
          live.frames.forEach(function (f) { if (f.n === frames.length) frames.push(f); });
          $("match-status").textContent = live.status;
          if (following) pos = Math.max(0, frames.length - 1);
          render();
          if (live.done) {
            stopped = true;
            note.textContent = "The match is over; loading its full replay…";
            location.reload();
            return;
          }
          setTimeout(poll, 1000);
        })
        .catch(function (err) {
          note.textContent = "Live: lost contact with the server (" + err.message + "); retrying.";
          setTimeout(poll, 3000);
        });
    }
    setTimeout(poll, 1000);
  }
})();
