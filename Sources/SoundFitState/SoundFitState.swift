// Patches and state; see README.
