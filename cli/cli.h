/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FP_CLI_H
#define FP_CLI_H

int usage_error(const char *msg);
int parse_pid(const char *s, long *pid);

struct json_object;
extern const char *socket_path;
int client_connect(void);
struct json_object *client_read(int fd);
struct json_object *client_call(int fd, const char *what, struct json_object *req);

int cmd_list(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_detach(int argc, char **argv);

#endif
