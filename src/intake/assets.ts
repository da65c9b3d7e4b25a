import { JOB_CSS } from '../people/job-assets.js';

/**
 * The intake pages' stylesheet and script, served from /intake/assets (the pages' CSP allows only our
 * own). The look is the job page's (phone first, one column, contrast of at least 4.5:1), plus the
 * form's fields, the progress steps and the honeypot, kept out of sight and out of the tab order.
 */
export const INTAKE_CSS = `${JOB_CSS}
input[type=email],input[type=tel]{width:100%;font:inherit;padding:.6rem;border:1px solid #767672;border-radius:.375rem;background:#fff;min-height:3rem}
.hint{margin:.1rem 0 .35rem;color:#4a4a48;font-size:.95rem}.hint:empty{display:none}
.trap{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
button:disabled{background:#767672}
.secondary-button{background:#fff;color:#7f1d1d;border:2px solid #7f1d1d}
.steps{list-style:none;padding:0;margin:0 0 .5rem;display:grid;grid-template-columns:repeat(4,1fr);gap:.25rem}
.steps li{padding:.5rem .25rem;border-radius:.375rem;text-align:center;font-weight:600;background:#ecece8;color:#4a4a48;font-size:.95rem}
.steps .past{background:#dcf3e1;color:#14532d}.steps .current{background:#1f4e8c;color:#fff}
.report{white-space:pre-wrap;overflow-wrap:anywhere}
.digest{font-family:ui-monospace,monospace;font-size:.85rem}
a{color:#1f4e8c}`;

/**
 * Solves the form's proof-of-work (the ALTCHA challenge in the form's data-challenge: find the number
 * whose SHA-256 with the salt is the challenge), puts the solution in the form, and lets it be sent.
 * The rest of the page needs no script.
 */
export const INTAKE_JS = `"use strict";
document.addEventListener('DOMContentLoaded', function () {
  var form = document.getElementById('intake-form');
  if (!form) return;
  var status = document.getElementById('pow-status');
  var field = form.querySelector('input[name=altcha]');
  var button = form.querySelector('button[type=submit]');
  // Shown to browsers without JavaScript (a <noscript> is not shown when only script execution is off).
  document.getElementById('pow-needs-script').hidden = true;
  if (!window.crypto || !window.crypto.subtle) {
    status.textContent = 'This form must be opened over a secure (https) connection to be sent.';
    return;
  }
  var challenge = JSON.parse(atob(form.getAttribute('data-challenge')));
  var encoder = new TextEncoder();
  var hex = function (buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return b.toString(16).padStart(2, '0'); }).join('');
  };
  button.disabled = true;
  status.textContent = 'Preparing the form…';
  (async function () {
    for (var n = 0; n <= challenge.maxnumber; n++) {
      var digest = hex(await crypto.subtle.digest('SHA-256', encoder.encode(challenge.salt + n)));
      if (digest === challenge.challenge) {
        field.value = btoa(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: n, salt: challenge.salt, signature: challenge.signature }));
        button.disabled = false;
        status.textContent = 'Ready to send.';
        return;
      }
    }
    status.textContent = 'The form could not be prepared: reload the page.';
  })();
});`;
