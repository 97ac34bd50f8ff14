package run

import "remessa/pipeline/results"

// NoteResults records a run's results in its folder's runs index, as the
// run does when it writes results.json (for the index benchmark).
func NoteResults(dir string, res *results.Results) {
	var denied []int64
	for _, row := range res.Rows {
		if row.Outcome == results.Denied {
			denied = append(denied, keyHash(row.Key+"|"+row.DueDate))
		}
	}
	noteResults(dir, res.Run.Complete, denied)
}
