"""HTTP handlers of campaigns: the admin API's campaign overview."""
