// The admin area works without JavaScript; this file only adds the "Copy key" button next to a
// newly created API key (the key stays selectable in its read-only field either way).
'use strict';
document.addEventListener('DOMContentLoaded', function () {
  var buttons = document.querySelectorAll('[data-copy-target]');
  Array.prototype.forEach.call(buttons, function (button) {
    var field = document.getElementById(button.getAttribute('data-copy-target'));
    var status = button.parentElement.querySelector('[data-copy-status]');
    if (!field) return;
    button.hidden = false;
    field.addEventListener('focus', function () { field.select(); });
    button.addEventListener('click', function () {
      var done = function (message) { if (status) status.textContent = message; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(field.value).then(
          function () { done('Copied to the clipboard.'); },
          function () { field.select(); done('Copying was blocked: the key is selected, press Ctrl+C (⌘C).'); }
        );
      } else {
        field.select();
        done('The key is selected: press Ctrl+C (⌘C) to copy it.');
      }
    });
  });
});
