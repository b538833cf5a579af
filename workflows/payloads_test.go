package workflows_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/converter"

	"github.com/whestbake/whestbake/bakeapi"
)

// payloadTypes are today's types of the payloads a history holds: workflow
// inputs and results by workflow type, activity inputs and results by
// activity type.
var payloadTypes = map[string]struct{ in, out any }{
	bakeapi.BakeWorkflowName:      {bakeapi.BakeInput{}, bakeapi.BakeOutput{}},
	bakeapi.SplitWorkflowName:     {bakeapi.SplitInput{}, bakeapi.SplitOutput{}},
	bakeapi.GenerateSeedsActivity: {bakeapi.GenerateSeedsInput{}, bakeapi.GenerateSeedsOutput{}},
	bakeapi.BakeSliceActivity:     {bakeapi.BakeSliceInput{}, bakeapi.BakeSliceOutput{}},
	bakeapi.NameSplitActivity:     {bakeapi.NameSplitInput{}, bakeapi.NameSplitOutput{}},
	bakeapi.MergeSplitActivity:    {bakeapi.MergeSplitInput{}, bakeapi.MergeSplitOutput{}},
	bakeapi.CombineSplitsActivity: {bakeapi.CombineSplitsInput{}, bakeapi.CombineSplitsOutput{}},
	bakeapi.PushActivity:          {bakeapi.PushInput{}, bakeapi.PushOutput{}},
	bakeapi.HubPushActivity:       {bakeapi.HubPushInput{}, bakeapi.HubPushOutput{}},
	bakeapi.GPUWorkersActivity:    {bakeapi.GPUWorkersInput{}, bakeapi.GPUWorkersOutput{}},
}

// TestRecordedPayloadsDecode: every workflow and activity input and result of
// every recorded history decodes, through the SDK's data converter, into
// today's bakeapi type, and holds no field the type lost. The golden JSON
// (bakeapi) pins what new histories hold; this pins that recorded ones
// still read.
func TestRecordedPayloadsDecode(t *testing.T) {
	var files []string
	for _, fs := range corpus(t) {
		files = append(files, fs...)
	}
	checkPayloads(t, files)
}

func checkPayloads(t *testing.T, files []string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h historypb.History
		if err := (temporalproto.CustomJSONUnmarshalOptions{}).Unmarshal(data, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		var workflowType string
		activityType := map[int64]string{} // by scheduled event ID
		decode := func(what string, typ string, p *commonpb.Payloads, out bool) {
			types, ok := payloadTypes[typ]
			if !ok {
				t.Errorf("%s: %s of %s: no known payload type", name, what, typ)
				return
			}
			v := types.in
			if out {
				v = types.out
			}
			checkPayload(t, name+": "+what+" of "+typ, p, v)
		}
		for _, e := range h.Events {
			switch {
			case e.GetWorkflowExecutionStartedEventAttributes() != nil:
				a := e.GetWorkflowExecutionStartedEventAttributes()
				workflowType = a.GetWorkflowType().GetName()
				decode("input", workflowType, a.GetInput(), false)
			case e.GetWorkflowExecutionCompletedEventAttributes() != nil:
				decode(
					"result",
					workflowType,
					e.GetWorkflowExecutionCompletedEventAttributes().GetResult(),
					true,
				)
			case e.GetWorkflowExecutionContinuedAsNewEventAttributes() != nil:
				a := e.GetWorkflowExecutionContinuedAsNewEventAttributes()
				decode("continued input", a.GetWorkflowType().GetName(), a.GetInput(), false)
			case e.GetActivityTaskScheduledEventAttributes() != nil:
				a := e.GetActivityTaskScheduledEventAttributes()
				activityType[e.GetEventId()] = a.GetActivityType().GetName()
				if a.GetActivityType().GetName() == "GenerateSeedsV0" {
					continue // the incompatible history's renamed activity
				}
				decode("input", a.GetActivityType().GetName(), a.GetInput(), false)
			case e.GetActivityTaskCompletedEventAttributes() != nil:
				a := e.GetActivityTaskCompletedEventAttributes()
				decode("result", activityType[a.GetScheduledEventId()], a.GetResult(), true)
			case e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
				a := e.GetStartChildWorkflowExecutionInitiatedEventAttributes()
				decode("input", a.GetWorkflowType().GetName(), a.GetInput(), false)
			case e.GetChildWorkflowExecutionCompletedEventAttributes() != nil:
				a := e.GetChildWorkflowExecutionCompletedEventAttributes()
				decode("result", a.GetWorkflowType().GetName(), a.GetResult(), true)
			}
		}
	}
}

// checkPayload decodes p into a new value of like's type, and reports the
// top-level JSON fields the type does not have.
func checkPayload(t *testing.T, what string, p *commonpb.Payloads, like any) {
	t.Helper()
	if len(p.GetPayloads()) != 1 {
		t.Errorf("%s: %d payloads, want 1", what, len(p.GetPayloads()))
		return
	}
	typ := reflect.TypeOf(like)
	v := reflect.New(typ)
	if err := converter.GetDefaultDataConverter().FromPayloads(p, v.Interface()); err != nil {
		t.Errorf("%s does not decode into %s: %v", what, typ, err)
		return
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(p.GetPayloads()[0].GetData(), &raw); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	known := jsonFields(typ)
	for k := range raw {
		if !known[k] {
			t.Errorf(
				"%s holds %s, which %s no longer has: add it back, "+
					"or a worker that decodes the recorded payload loses it",
				what,
				k,
				typ,
			)
		}
	}
}

// jsonFields are the top-level JSON names of struct type typ, with those of
// its embedded structs.
func jsonFields(typ reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k := range jsonFields(f.Type) {
				out[k] = true
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		out[name] = true
	}
	return out
}
