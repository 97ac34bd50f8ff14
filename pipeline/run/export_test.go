package run

// NoteResults records a run's results in its folder's runs index, as the
// run does when it writes results.json (for the index benchmark).
var NoteResults = noteResults
