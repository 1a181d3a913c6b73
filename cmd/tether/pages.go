package main

// collectPages reads one page from token with fetch, or every page from it
// on when all is set, and returns the items read and the token of the next
// page ("" after the last).
func collectPages[T any](all bool, token string, fetch func(token string) ([]T, string, error)) ([]T, string, error) {
	items := []T{}
	for {
		page, next, err := fetch(token)
		if err != nil {
			return nil, "", err
		}
		items = append(items, page...)
		token = next
		if !all || token == "" {
			return items, token, nil
		}
	}
}
