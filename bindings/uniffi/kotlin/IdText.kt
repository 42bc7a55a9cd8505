// Hand-written over the generated bindings (idforge_uniffi.kt): the text forms of 64-bit ids in
// one object, so Java calls them as `IdText.toText(id, TextForm.BASE32)` (the generated functions
// live in `Idforge_uniffiKt`).
package dev.idforge

/**
 * Text forms of 64-bit ids (snowflakes): [TextForm.BASE32] (13 Crockford characters, TSID's form,
 * sortable), [TextForm.BASE62] (11 characters, sortable byte-wise) and [TextForm.DECIMAL]
 * (JSON-safe). A `Long` is read as its 64 bits: an unsigned layout's id past `Long.MAX_VALUE` is
 * negative here and its decimal text is the unsigned number.
 */
object IdText {
    /** The id written in [form] (default [TextForm.BASE32]). */
    @JvmStatic @JvmOverloads fun toText(id: Long, form: TextForm = TextForm.BASE32): String = idToText(id, form)

    /**
     * The id whose text in [form] (default [TextForm.BASE32]) is [text]; only the id's one text is taken
     * (`InvalidDecimal`, `InvalidBase32`, `InvalidBase62` otherwise).
     */
    @JvmStatic @JvmOverloads @Throws(IdforgeException::class)
    fun fromText(text: String, form: TextForm = TextForm.BASE32): Long = idFromText(text, form)

    /**
     * The fields of any id written as [text], in the order `idforge decode` prints them: of [kind],
     * or detected; with [form], a snowflake in that text form; [layout] reads snowflakes (Twitter's
     * when null). `InvalidArgument` for text that is no id, or the error of the kind it was read as.
     */
    @JvmStatic @JvmOverloads @Throws(IdforgeException::class)
    fun describe(text: String, kind: IdKind? = null, form: TextForm? = null, layout: Layout? = null): List<IdField> =
        describeId(text, kind, form, layout)
}
