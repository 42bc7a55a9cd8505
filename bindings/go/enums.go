package idforge

// #include "bridge.h"
import "C"

// cEnums pairs each Go enum value with the C header's, for the tests (which cannot use cgo).
func cEnums() map[string][2]uint64 {
	return map[string][2]uint64{
		"TimeNodeSeq":   {uint64(TimeNodeSeq), C.IDFORGE_ORDER_TIME_NODE_SEQ},
		"TimeSeqNode":   {uint64(TimeSeqNode), C.IDFORGE_ORDER_TIME_SEQ_NODE},
		"Twitter":       {uint64(Twitter), C.IDFORGE_PRESET_TWITTER},
		"Discord":       {uint64(Discord), C.IDFORGE_PRESET_DISCORD},
		"Instagram":     {uint64(Instagram), C.IDFORGE_PRESET_INSTAGRAM},
		"Sonyflake":     {uint64(Sonyflake), C.IDFORGE_PRESET_SONYFLAKE},
		"Baidu":         {uint64(Baidu), C.IDFORGE_PRESET_BAIDU},
		"JSSafe":        {uint64(JSSafe), C.IDFORGE_PRESET_JS_SAFE},
		"PolicyDefault": {uint64(PolicyDefault), C.IDFORGE_POLICY_KIND_DEFAULT},
		"PolicyBorrow":  {uint64(PolicyBorrow), C.IDFORGE_POLICY_KIND_BORROW},
		"PolicyWait":    {uint64(PolicyWait), C.IDFORGE_POLICY_KIND_WAIT},
		"PolicyError":   {uint64(PolicyError), C.IDFORGE_POLICY_KIND_ERROR},
	}
}
