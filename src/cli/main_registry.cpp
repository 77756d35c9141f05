// Keeps dpgnn_cli a non-empty library while subcommands are added one by one.
#include "command.h"
