// A board's search, filters and column chooser fold away on a narrow screen (issue 32: a phone's
// first screen shows the table), unless they are in use. Run where the page loads it, right
// after the element, so a phone never paints them open; without scripts they stay open.
(function () {
  var controls = document.getElementById("board-controls");
  if (controls && !controls.hasAttribute("data-keep-open") && window.matchMedia("(max-width: 40rem)").matches) {
    controls.open = false;
  }
})();
