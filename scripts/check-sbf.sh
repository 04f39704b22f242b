#!/usr/bin/env bash
# Rejects an SBPF v0 binary that would load badly: an undefined symbol that is not a known
# syscall, or a pc-relative call whose target lies outside .text (sbpf-linker 0.1.9 can leave
# such calls behind; the runtime then refuses the program as "not deployed").
set -euo pipefail
so="$1"
objdump=llvm-objdump-22; readelf=llvm-readelf-22
allowed=" sol_log_ sol_log_64_ sol_log_data sol_log_pubkey sol_log_compute_units_ sol_invoke_signed_c sol_invoke_signed_rust sol_create_program_address sol_try_find_program_address sol_get_clock_sysvar sol_get_rent_sysvar sol_sha256 sol_curve_validate_point sol_memcpy_ sol_memmove_ sol_memset_ sol_memcmp_ sol_set_return_data sol_get_return_data sol_panic_ abort sol_remaining_compute_units "
bad=0
for sym in $($readelf --dyn-syms "$so" | awk '$7=="UND" && $8!="" {print $8}'); do
  case "$allowed" in *" $sym "*) ;; *) echo "check-sbf: $so: unresolved symbol $sym" >&2; bad=1;; esac
done
read -r text_start text_size < <($readelf -S -W "$so" | awk '{ for (i = 1; i <= NF; i++) if ($i == ".text") print $(i+2), $(i+4) }')
text_start=$((16#$text_start)); text_size=$((16#$text_size))
n_insn=$((text_size / 8)); first=$((text_start / 8))
while read -r idx hex; do
  imm=$((16#$hex)); (( imm >= 2147483648 )) && imm=$((imm - 4294967296))
  (( imm == -1 )) && continue
  target=$((idx - first + 1 + imm))
  if (( target < 0 || target >= n_insn )); then
    echo "check-sbf: $so: call at instruction $((idx - first)) jumps to $target, outside .text ($n_insn)" >&2; bad=1
  fi
done < <($objdump -d "$so" | awk '$2=="85" && $3=="10" { sub(":", "", $1); print $1, $9 $8 $7 $6 }')
size=$(stat -c %s "$so")
[ "$bad" = 0 ] && echo "check-sbf: $so ok ($size bytes, $n_insn instructions)"

exit $bad
