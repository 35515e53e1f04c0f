package common

import "testing"

func TestElideMiddle(t *testing.T) {
	cases := []struct {
		s    string
		w    int
		want string
	}{
		{"tracker__add_comment", 20, "tracker__add_comment"},
		{"tracker__add_comment", 13, "track…comment"},
		{"tracker__add_comment.2", 12, "trac…mment.2"},
		{"github__get_pull_request", 10, "git…equest"},
		{"abc", 2, "…c"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
		{"données_réservées", 9, "don…rvées"},
	}
	for _, tc := range cases {
		got := ElideMiddle(tc.s, tc.w)
		if got != tc.want {
			t.Errorf("ElideMiddle(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
		if TextWidth(got) > max(tc.w, 0) {
			t.Errorf("ElideMiddle(%q, %d) = %q is %d cells wide", tc.s, tc.w, got, TextWidth(got))
		}
	}
}

func TestElidePair(t *testing.T) {
	cases := []struct {
		a, b         string
		w            int
		wantA, wantB string
	}{
		{"E3", "tracker__add_comment", 30, "E3", "tracker__add_comment"},
		{"E3", "tracker__add_comment", 17, "E3", "track…comment"},
		// The name stays whole; the tool takes what is left.
		{"open_issues", "tracker__list_issues", 22, "open_issues", "tra…ssues"},
		{"do.0", "user__append_event", 13, "do.0", "us…vent"},
		// Too little left for the tool: it goes, and the name shows whole.
		{"classify_each_issue", "tracker__add_comment", 22, "classify_each_issue", ""},
		{"customer_update", "user__customer_update", 20, "customer_update", ""},
		// The name alone does not fit: it loses its middle.
		{"classify_each_issue", "E1", 14, "class…ch_issue", ""},
		{"customer_update", "user__customer_update", 12, "cust…_update", ""},
	}
	for _, tc := range cases {
		a, b := ElidePair(tc.a, tc.b, tc.w)
		if a != tc.wantA || b != tc.wantB {
			t.Errorf("ElidePair(%q, %q, %d) = %q, %q; want %q, %q", tc.a, tc.b, tc.w, a, b, tc.wantA, tc.wantB)
		}
	}
}
