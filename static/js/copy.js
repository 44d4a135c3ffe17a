/* Copy buttons (the citation, issue 13): a <button data-copy="ID" hidden> copies the text of
   the element #ID and says so in the .copy-status beside it. The buttons start hidden and are
   shown here, so a page without JavaScript offers no button that does nothing. No inline
   script: the Content-Security-Policy allows this file only. */
(function () {
  "use strict";

  function copyBySelection(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "copy-buffer";
    document.body.appendChild(area);
    area.select();
    var copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    document.body.removeChild(area);
    return copied;
  }

  function say(button, copied) {
    var status = button.parentElement.querySelector(".copy-status");
    if (status) {
      status.textContent = copied
        ? "Copied to the clipboard."
        : "Could not copy: select the text and copy it.";
    }
  }

  function copy(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { say(button, true); },
        function () { say(button, copyBySelection(text)); }
      );
    } else {
      say(button, copyBySelection(text));
    }
  }

  function init() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].hidden = false;
      buttons[i].addEventListener("click", function (event) { copy(event.currentTarget); });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
