"""Running and checking an install: the daemon, the login service, `status` and `doctor`."""
