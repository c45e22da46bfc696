// A misspelled constant name gets a did-you-mean hint.
const hidden = 64;
const doubled = hiden * 2;
