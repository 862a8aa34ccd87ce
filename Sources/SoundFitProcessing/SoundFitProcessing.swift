// The processing model; see README.
