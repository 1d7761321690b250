// The card step: Stripe's Payment Element in the #pay form; Stripe sends the buyer back to
// the order's page once paid. Everything it needs is in the form's data attributes.
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("pay");
  if (!form || !window.Stripe) return;
  var stripe = window.Stripe(form.dataset.key);
  var elements = stripe.elements({clientSecret: form.dataset.secret});
  elements.create("payment").mount("#card-element");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = form.querySelector("button");
    button.disabled = true;
    stripe.confirmPayment({elements: elements, confirmParams: {return_url: form.dataset.return}})
      .then(function (result) {
        if (result && result.error) {
          document.getElementById("pay-problem").textContent = result.error.message;
          button.disabled = false;
        }
      });
  });
});
