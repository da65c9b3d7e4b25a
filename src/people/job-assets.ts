/**
 * The job page's stylesheet and script, served from /job/assets (the page's CSP allows only our own).
 * Phone first: one column, large tap targets, system fonts, colours of at least 4.5:1 contrast.
 */
export const JOB_CSS = `*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:1.0625rem;line-height:1.45;color:#1a1a1a;background:#f4f4f2}
main{max-width:40rem;margin:0 auto;padding:1rem}
header{margin-bottom:1rem}
h1{font-size:1.5rem;margin:.25rem 0}
h2{font-size:1.2rem;margin:0 0 .5rem}
section{background:#fff;border-radius:.5rem;padding:1rem;margin:0 0 1rem;border:1px solid #d0d0cc}
.for{margin:0;color:#4a4a48;font-weight:600}
.status{display:inline-block;margin:.25rem 0 0;padding:.2rem .6rem;border-radius:1rem;background:#e6e6e2;font-weight:600}
.status-in_progress{background:#d9ecff;color:#0b3d6e}.status-completed,.status-closed{background:#dcf3e1;color:#14532d}.status-cancelled{background:#fde2e1;color:#7f1d1d}.status-on_hold{background:#fff1c2;color:#5c4300}
.details{margin:0}.details div{display:flex;flex-wrap:wrap;gap:.25rem 1rem;padding:.35rem 0;border-bottom:1px solid #ecece8}
.details dt{font-weight:600;min-width:7rem}.details dd{margin:0;overflow-wrap:anywhere}
label,legend{display:block;font-weight:600;margin:.5rem 0 .25rem}
textarea,input[type=file]{width:100%;font:inherit;padding:.6rem;border:1px solid #767672;border-radius:.375rem;background:#fff}
button{font:inherit;font-weight:600;min-height:3rem;padding:.6rem 1.25rem;margin:.75rem 0 0;border:0;border-radius:.375rem;background:#1f4e8c;color:#fff;width:100%}
button:focus-visible,textarea:focus-visible,input:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
.primary button,.primary-button{background:#14622f}
.primary{margin:0 0 1rem}
fieldset{border:1px solid #d0d0cc;border-radius:.375rem;margin:.75rem 0 0;padding:.5rem .75rem}
.check{display:flex;align-items:center;gap:.5rem;min-height:2.75rem}.check input{width:1.5rem;height:1.5rem}.check label{margin:0;font-weight:400;overflow-wrap:anywhere}
.photos{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(6.5rem,1fr));gap:.5rem}
.photos img{width:100%;aspect-ratio:1;object-fit:cover;border-radius:.375rem;background:#ecece8}
.photos .file{padding:.5rem;background:#ecece8;border-radius:.375rem;overflow-wrap:anywhere}
.notes{list-style:none;padding:0;margin:0}.notes li{border-bottom:1px solid #ecece8;padding:.35rem 0}.notes p{margin:0;white-space:pre-wrap}
.quiet{color:#4a4a48}
h3{font-size:1.05rem;margin:.75rem 0 .25rem}
.items{padding-left:1.25rem;margin:0}.items li{padding:.5rem 0;border-bottom:1px solid #ecece8}.item-label{margin:0;font-weight:600}
.answer{margin:.25rem 0 0;color:#14532d}.answer.failed{color:#7f1d1d;font-weight:600}
input[type=number],input[type=text],select{width:100%;font:inherit;padding:.6rem;border:1px solid #767672;border-radius:.375rem;background:#fff;min-height:3rem}
.message{padding:.75rem 1rem;border-radius:.5rem;font-weight:600}.message.success{background:#dcf3e1;color:#14532d}.message.error{background:#fde2e1;color:#7f1d1d}
.outcome{border-color:#14622f}
#upload-status:empty{display:none}`;

/**
 * Uploads the chosen photos one by one as the raw body of a POST (the attachment path streams it
 * into the database as it arrives, as the API does), then shows the page again with them.
 */
export const JOB_JS = `"use strict";
document.addEventListener('DOMContentLoaded', function () {
  var form = document.getElementById('upload-form');
  if (!form) return;
  form.addEventListener('submit', async function (event) {
    event.preventDefault();
    var input = document.getElementById('photo-input');
    var status = document.getElementById('upload-status');
    var button = form.querySelector('button');
    var files = Array.prototype.slice.call(input.files || []);
    if (files.length === 0) { status.textContent = 'Choose one or more photos first.'; return; }
    button.disabled = true;
    for (var i = 0; i < files.length; i++) {
      var file = files[i];
      status.textContent = 'Uploading ' + file.name + ' (' + (i + 1) + ' of ' + files.length + ')…';
      var response;
      try {
        response = await fetch(form.action + '?filename=' + encodeURIComponent(file.name), { method: 'POST', body: file, headers: { 'content-type': file.type || 'application/octet-stream' } });
      } catch (error) {
        status.textContent = file.name + ' could not be sent: check the connection and try again.';
        button.disabled = false;
        return;
      }
      if (!response.ok) {
        var answer = await response.json().catch(function () { return {}; });
        status.textContent = file.name + ' was not accepted: ' + (answer.message || response.status);
        button.disabled = false;
        return;
      }
    }
    status.textContent = files.length === 1 ? 'The photo is uploaded.' : files.length + ' photos are uploaded.';
    window.location.reload();
  });
});`;
