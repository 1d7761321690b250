"""Plain checks of a command's fields (ground): what a field may hold and the words of a
refusal, shared by the domains that validate their own commands."""
