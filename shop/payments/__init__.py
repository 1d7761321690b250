"""Payments: the providers (``providers``), refunds, and card payments in ``stripe/``."""


class RefundRefused(Exception):
    """The provider refused to give a refund's money back (``reason``: its code and
    message; ``ours``: it refused the shop's own credentials)."""

    def __init__(self, reason: str, ours: bool = False):
        super().__init__(reason)
        self.reason, self.ours = reason, ours
