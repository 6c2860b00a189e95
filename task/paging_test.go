package task_test

import (
	"testing"

	"github.com/pactum/pactum/task"
)

func TestResolvePageSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, want int
		ok      bool
	}{
		{0, task.DefaultPageSize, true},
		{1, 1, true},
		{task.MaxPageSize, task.MaxPageSize, true},
		{task.MaxPageSize + 1, 0, false},
		{-1, 0, false},
	} {
		if got, ok := task.ResolvePageSize(tc.n); got != tc.want || ok != tc.ok {
			t.Errorf("ResolvePageSize(%d) = %d, %v; want %d, %v", tc.n, got, ok, tc.want, tc.ok)
		}
	}
	if got, want := task.PageSizeError("page_size", 101), "page_size must be between 1 and 100, got 101"; got != want {
		t.Errorf("PageSizeError = %q, want %q", got, want)
	}
}
