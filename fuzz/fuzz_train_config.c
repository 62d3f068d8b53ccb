/* libFuzzer harness: the training config reader (dp_train_config_load, policy/dp_train.h); an
 * accepted config writes back to JSON that reads back to the same config. */
#include "fuzz_common.h"
#include "dp_train.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    dp_error err;
    dp_error_clear(&err);
    dp_train_config c;
    dp_train_config_default(&c);
    if (dp_train_config_load(&c, path, &err) != DP_OK) {
        fuzz_check_error(&err, path);
        return 0;
    }
    char *js = dp_train_config_to_json(&c);
    FUZZ_CHECK(js != NULL);
    dp_train_config d;
    dp_train_config_default(&d);
    if (dp_train_config_from_json_text(&d, js, &err) != DP_OK) fprintf(stderr, "re-read: %s\n", err.msg);
    FUZZ_CHECK(dp_train_config_from_json_text(&d, js, &err) == DP_OK);
    char *js2 = dp_train_config_to_json(&d);
    FUZZ_CHECK(js2 != NULL && strcmp(js, js2) == 0);
    free(js);
    free(js2);
    return 0;
}
