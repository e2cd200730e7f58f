/* The bot page's rating charts (server-drawn SVG, see site.rating_chart): the values of the
   point nearest the pointer shown under the chart, and a choice of axis (the bot's own matches,
   or time). Plain DOM; text goes in through textContent only. */
(function () {
  "use strict";
  document.querySelectorAll("figure.rating-history").forEach(function (figure) {
    var tip = figure.querySelector(".chart-tip");

    figure.querySelectorAll(".axis-choice button").forEach(function (button) {
      button.addEventListener("click", function () {
        figure.querySelectorAll(".axis-choice button").forEach(function (b) {
          b.setAttribute("aria-pressed", String(b === button));
        });
        figure.querySelectorAll(".chart-box").forEach(function (box) {
          box.hidden = box.dataset.axis !== button.dataset.axis;
        });
        tip.textContent = "";
      });
    });

    figure.querySelectorAll("svg.chart").forEach(function (svg) {
      var points = Array.prototype.slice.call(svg.querySelectorAll("circle.pt"));
      if (!points.length) return;
      var current = null;
      function show(point) {
        if (current) current.classList.remove("on");
        current = point;
        point.classList.add("on");
        tip.textContent = point.dataset.tip;
      }
      svg.addEventListener("pointermove", function (e) {
        // The point nearest the pointer along the x axis, in screen pixels.
        var best = null, bestDistance = Infinity;
        points.forEach(function (p) {
          var box = p.getBoundingClientRect();
          var d = Math.abs(box.left + box.width / 2 - e.clientX);
          if (d < bestDistance) { best = p; bestDistance = d; }
        });
        if (best) show(best);
      });
    });
  });
})();
