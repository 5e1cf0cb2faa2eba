package risk

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLevelsAreOrderedFromSafeToForbidden(t *testing.T) {
	require.Less(t, Safe, Moderate)
	require.Less(t, Moderate, High)
	require.Less(t, High, Dangerous)
	require.Less(t, Dangerous, Forbidden)
}

func TestLevelStringAndParseRoundTrip(t *testing.T) {
	tests := []struct {
		level Level
		name  string
	}{
		{Safe, "safe"},
		{Moderate, "moderate"},
		{High, "high"},
		{Dangerous, "dangerous"},
		{Forbidden, "forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.name, tt.level.String())
			got, err := ParseLevel(tt.name)
			require.NoError(t, err)
			require.Equal(t, tt.level, got)
		})
	}
}

func TestParseLevelAcceptsUpperCaseAndSpaces(t *testing.T) {
	got, err := ParseLevel("  HIGH ")
	require.NoError(t, err)
	require.Equal(t, High, got)
}

func TestParseLevelRejectsUnknownNames(t *testing.T) {
	_, err := ParseLevel("critical")
	require.ErrorContains(t, err, `unknown risk level "critical"`)
}

func TestLevelStringOfInvalidValueSaysSo(t *testing.T) {
	require.Equal(t, "level(9)", Level(9).String())
}

func TestLevelMarshalsAsItsNameInJSON(t *testing.T) {
	b, err := json.Marshal(struct{ Risk Level }{Dangerous})
	require.NoError(t, err)
	require.JSONEq(t, `{"Risk":"dangerous"}`, string(b))

	var back struct{ Risk Level }
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, Dangerous, back.Risk)

	require.Error(t, json.Unmarshal([]byte(`{"Risk":"nope"}`), &back))
	_, err = json.Marshal(struct{ Risk Level }{Level(-1)})
	require.Error(t, err)
}
