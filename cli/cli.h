/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_CLI_H
#define FP_CLI_H

int usage_error(const char *msg);
int parse_pid(const char *s, long *pid);

int cmd_list(int argc, char **argv);

#endif
