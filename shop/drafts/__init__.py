"""Draft orders (issue 41): orders staff prepare for a customer, priced by the quote's
function, taking no stock until completed through the checkout's placing (docs/draft-orders.md)."""
