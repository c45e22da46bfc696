// A module with an error.
const oops = missing_name;
