// The copy button of the one-time secret page. Without JavaScript the button stays hidden and
// the secret can be selected and copied by hand.
"use strict";

document.querySelectorAll("button[data-copy]").forEach((button) => {
  const field = document.getElementById(button.dataset.copy);
  const status = document.getElementById("copy-status");
  const say = (text) => {
    if (status) status.textContent = text;
  };
  button.hidden = false;
  button.addEventListener("click", async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      say("Copied to the clipboard.");
    } catch {
      say(document.execCommand("copy") ? "Copied to the clipboard." : "Press Ctrl+C (or ⌘C) to copy the selected key.");
    }
  });
});

// A page waiting for the worker (a queued ping or replay) reloads itself until it lands.
document.querySelectorAll("[data-refresh]").forEach((element) => {
  setTimeout(() => window.location.reload(), Number(element.dataset.refresh) * 1000);
});
