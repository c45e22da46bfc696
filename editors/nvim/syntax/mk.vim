" Vim syntax for the mkdsl `.mk` tile language (filetype `mk`, set by lua/mkdsl.lua).
" Neovim 0.9+ also colours names from the server's semantic tokens on top of this.
if exists('b:current_syntax')
  finish
endif

syn keyword mkKeyword       import const config weight state group op fn step let var
syn keyword mkControl       for in by if else return sync tasks
syn keyword mkOperatorWord  load store as
syn keyword mkModifier      inout
syn keyword mkAssert        static_assert
syn keyword mkBoolean       true false
syn keyword mkConstant      inf
syn keyword mkType          bf16 f16 f32 i32 bool int float
syn keyword mkLayout        tiled col_major row_major padded swizzle interleave
syn keyword mkBuiltin       exp log sqrt rsqrt sin cos tanh sigmoid silu abs pow max min select
syn keyword mkBuiltin       sum row_sum row_max row_min mean argmax dot rowdot coldot mma mma_nt iota repeat_rows repeat_cols concat

syn match   mkDeclName      /\%(\<\%(op\|fn\|step\)\s\+\)\@<=\h\w*/
syn match   mkTypeName      /\%(\<\%(config\|group\)\s\+\)\@<=\h\w*/
syn match   mkAnnotation    /@\s*\h\w*/
syn match   mkNumber        /\<\d\%(_\=\d\)*\>/
syn match   mkFloat         /\<\d\%(_\=\d\)*\%(\.\d\%(_\=\d\)*\%([eE][+-]\=\d\+\)\=\|[eE][+-]\=\d\+\)\>/
syn match   mkOperator      /->\|\.\.\|[-+*\/%]=\=\|[=!<>]=\=\|&&\|||/

syn match   mkEscape        /\\["\\nt]/ contained
syn match   mkPlaceholder   /{\h\w*}/ contained
syn region  mkString        start=/"/ skip=/\\./ end=/"\|$/ contains=mkEscape,mkPlaceholder oneline

syn keyword mkTodo          TODO FIXME XXX NOTE contained
syn match   mkCodeSpan      /`[^`]*`/ contained
syn region  mkDocComment    start=+///+ end=/$/ contains=mkTodo,mkCodeSpan,@Spell
syn region  mkComment       start=+//\%(/\)\@!+ end=/$/ contains=mkTodo,@Spell
syn region  mkComment       start=+/\*+ end=+\*/+ contains=mkTodo,@Spell

hi def link mkKeyword      Keyword
hi def link mkControl      Conditional
hi def link mkOperatorWord Operator
hi def link mkModifier     StorageClass
hi def link mkAssert       Keyword
hi def link mkBoolean      Boolean
hi def link mkConstant     Constant
hi def link mkType         Type
hi def link mkLayout       Type
hi def link mkBuiltin      Function
hi def link mkDeclName     Function
hi def link mkTypeName     Structure
hi def link mkAnnotation   PreProc
hi def link mkNumber       Number
hi def link mkFloat        Float
hi def link mkOperator     Operator
hi def link mkString       String
hi def link mkEscape       SpecialChar
hi def link mkPlaceholder  Special
hi def link mkTodo         Todo
hi def link mkCodeSpan     SpecialComment
hi def link mkDocComment   SpecialComment
hi def link mkComment      Comment

let b:current_syntax = 'mk'
