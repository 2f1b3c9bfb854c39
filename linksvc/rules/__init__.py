"""Smart links: the rules of a link, evaluated in order on each click (docs/decisions.md, "Smart links")."""
