// The .mk language. docs/language.md is the reference; this grammar is its syntax.
// Semantic rules (which statements an op body may hold, what a name means) live in frontend/.
grammar Mk;

file : topDecl* EOF ;

topDecl
  : importDecl
  | constDecl
  | configDecl
  | weightDecl
  | stateDecl
  | groupDecl
  | opDecl
  | fnDecl
  | stepDecl
  | staticAssert
  ;

importDecl   : IMPORT qualName SEMI ;
qualName     : IDENT (DOT IDENT)* ;
constDecl    : CONST IDENT (COLON typeRef)? ASSIGN expr SEMI ;
configDecl   : CONFIG IDENT (COLON IDENT)? LBRACE configField* RBRACE ;
configField  : IDENT ASSIGN expr SEMI ;
weightDecl   : WEIGHT IDENT COLON typeRef ASSIGN weightSource SEMI ;
weightSource : STRING | LBRACK STRING (COMMA STRING)* COMMA? RBRACK ;
stateDecl    : STATE IDENT COLON typeRef SEMI ;
groupDecl    : GROUP IDENT LBRACK IDENT IN expr DOTDOT expr RBRACK LBRACE groupMember* RBRACE ;
groupMember  : weightDecl | stateDecl ;
staticAssert : STATIC_ASSERT LPAREN expr (COMMA STRING)? RPAREN SEMI ;

opDecl       : annotation* OP IDENT genericParams? LPAREN paramList? RPAREN ARROW opResults
               TASKS taskDim (COMMA taskDim)* block ;
opResults    : namedResult | LPAREN (namedResult (COMMA namedResult)*)? RPAREN ;
namedResult  : IDENT COLON typeRef ;
taskDim      : IDENT IN expr ;

fnDecl       : FN IDENT genericParams? LPAREN paramList? RPAREN (ARROW fnResults)? block ;
stepDecl     : STEP IDENT LPAREN paramList? RPAREN ARROW fnResults block ;
fnResults    : typeRef | LPAREN fnResult (COMMA fnResult)* RPAREN ;
fnResult     : (IDENT COLON)? typeRef ;

genericParams : LT genericParam (COMMA genericParam)* GT ;
genericParam  : IDENT (COLON IDENT)? (ASSIGN MINUS? primary)? ;
paramList     : param (COMMA param)* ;
param         : IDENT COLON INOUT? typeRef ;

// A type: a dtype or group name, an optional shape, an optional layout.
typeRef      : IDENT (LBRACK expr (COMMA expr)* RBRACK)? layout? ;
layout       : IDENT (LPAREN (expr (COMMA expr)*)? RPAREN)? ;

annotation   : AT IDENT (LPAREN (expr (COMMA expr)*)? RPAREN)? ;

block        : LBRACE stmt* RBRACE ;

stmt
  : annotation* LET letPattern (COLON typeRef)? ASSIGN expr SEMI   # letStmt
  | VAR IDENT COLON typeRef (ASSIGN expr)? SEMI                    # varStmt
  | CONST IDENT (COLON typeRef)? ASSIGN expr SEMI                  # constStmt
  | expr assignOp expr SEMI                                        # assignStmt
  | STORE expr ASSIGN expr SEMI                                    # storeStmt
  | FOR IDENT IN expr DOTDOT expr (BY expr)? block                 # forStmt
  | IF expr block (ELSE elseBranch)?                               # ifStmt
  | RETURN expr? SEMI                                              # returnStmt
  | SYNC IDENT SEMI                                                # syncStmt
  | STATIC_ASSERT LPAREN expr (COMMA STRING)? RPAREN SEMI          # assertStmt
  | annotation* expr SEMI                                          # exprStmt
  ;
elseBranch   : block | IF expr block (ELSE elseBranch)? ;
letPattern   : IDENT | LPAREN IDENT (COMMA IDENT)* RPAREN ;
assignOp     : ASSIGN | PLUS_ASSIGN | MINUS_ASSIGN | STAR_ASSIGN | SLASH_ASSIGN ;

expr
  : primary                                               # primaryExpr
  | expr LBRACK slice (COMMA slice)* RBRACK               # indexExpr
  | expr DOT IDENT                                        # fieldExpr
  | LOAD expr                                             # loadExpr
  | expr AS IDENT                                         # castExpr
  | op=(MINUS | NOT) expr                                 # unaryExpr
  | expr op=(STAR | SLASH | PERCENT) expr                 # binaryExpr
  | expr op=(PLUS | MINUS) expr                           # binaryExpr
  | expr op=(LT | LE | GT | GE) expr                      # binaryExpr
  | expr op=(EQ | NE) expr                                # binaryExpr
  | expr op=AND expr                                      # binaryExpr
  | expr op=OR expr                                       # binaryExpr
  ;
slice        : expr (COLON PLUS expr)? ;
primary
  : INT                                                   # intLit
  | FLOAT                                                 # floatLit
  | (TRUE | FALSE)                                        # boolLit
  | IDENT LPAREN (arg (COMMA arg)*)? RPAREN               # callExpr
  | IDENT                                                 # nameExpr
  | LPAREN expr (COMMA expr)+ RPAREN                      # tupleExpr
  | LPAREN expr RPAREN                                    # parenExpr
  ;
arg          : (IDENT ASSIGN)? expr ;

IMPORT : 'import' ; CONST : 'const' ; CONFIG : 'config' ; WEIGHT : 'weight' ; STATE : 'state' ;
GROUP : 'group' ; OP : 'op' ; FN : 'fn' ; STEP : 'step' ; TASKS : 'tasks' ; IN : 'in' ;
INOUT : 'inout' ; LET : 'let' ; VAR : 'var' ; STORE : 'store' ; LOAD : 'load' ; FOR : 'for' ;
BY : 'by' ; IF : 'if' ; ELSE : 'else' ; RETURN : 'return' ; SYNC : 'sync' ; AS : 'as' ;
STATIC_ASSERT : 'static_assert' ; TRUE : 'true' ; FALSE : 'false' ;

ARROW : '->' ; DOTDOT : '..' ; DOT : '.' ; COMMA : ',' ; SEMI : ';' ; COLON : ':' ; AT : '@' ;
LPAREN : '(' ; RPAREN : ')' ; LBRACK : '[' ; RBRACK : ']' ; LBRACE : '{' ; RBRACE : '}' ;
PLUS_ASSIGN : '+=' ; MINUS_ASSIGN : '-=' ; STAR_ASSIGN : '*=' ; SLASH_ASSIGN : '/=' ;
EQ : '==' ; NE : '!=' ; LE : '<=' ; GE : '>=' ; LT : '<' ; GT : '>' ; ASSIGN : '=' ;
AND : '&&' ; OR : '||' ; NOT : '!' ;
PLUS : '+' ; MINUS : '-' ; STAR : '*' ; SLASH : '/' ; PERCENT : '%' ;

FLOAT  : DIGITS '.' DIGITS EXPONENT? | DIGITS EXPONENT ;
INT    : DIGITS ;
fragment DIGITS   : [0-9] ('_'? [0-9])* ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;
IDENT  : [a-zA-Z_] [a-zA-Z_0-9]* ;
// A string ends at its line: an unterminated one is one bad token, not the rest of the file.
STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
BAD_STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* ;

DOC_COMMENT : '///' ~[\r\n]* -> channel(HIDDEN) ;
LINE_COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
// Only a comment with no closing '*/' at all, so it never outmatches BLOCK_COMMENT.
BAD_COMMENT : '/*' ( ~[*] | '*'+ ~[*/] )* '*'* EOF ;
NEWLINE : '\r'? '\n' -> channel(HIDDEN) ;
WS : [ \t\f]+ -> channel(HIDDEN) ;
// Anything else is one error token, so the parser reports it with its location.
ERROR_CHAR : . ;
