"""Returns (issue 41): units of an order's shipped lines its customer sends back.

``rules`` holds the pure rules (which units may be asked for, the window, what arrived),
``store`` the SQL and the JSON a return is shown as, ``flow`` the four moves (request,
approve, reject, receive) with their events and mails, and the value a received return is
worth back (``flow.refundable_value``, the credit of an exchange). Rules and decisions:
docs/returns.md.
"""
