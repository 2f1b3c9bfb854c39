"""HTTP handlers of links: the resolver's routes and the admin link pages."""
