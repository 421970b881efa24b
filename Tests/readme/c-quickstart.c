// The README's C quick start is a whole program.
// readme: c-quickstart
